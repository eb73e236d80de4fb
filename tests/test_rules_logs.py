"""Our own table logs (tests/logs/) through ``domino-hub rules check``, and broken logs that must fail cleanly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hub.cli import main
from scorekeeper import Code

LOGS = Path(__file__).parent / "logs"
LOG_FILES = sorted(LOGS.glob("*.json"))
CONSOLE_SCRIPT = Path(sys.executable).with_name("domino-hub")


def check_json(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    rc = main(["rules", "check", str(path), "--json"])
    out = capsys.readouterr().out
    return rc, [json.loads(line) for line in out.splitlines()]


def run_script(path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """The real console script, as a person at the table would run it."""
    return subprocess.run(
        [str(CONSOLE_SCRIPT), "rules", "check", str(path), *flags], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: p.stem)
def test_log_passes(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, lines = check_json(path, capsys)
    assert rc == 0, "\n".join(json.dumps(line) for line in lines if "mismatch" in line)
    steps = json.loads(path.read_text())["steps"]
    assert [line["step"] for line in lines] == list(range(len(steps)))
    for line, step in zip(lines, steps, strict=True):
        expect = step.get("expect", "ok")
        if expect == "ok":
            assert line["verdict"] == "ok"
        else:
            assert (line["verdict"], line["code"]) == ("illegal", expect["illegal"])
            assert line["message"]


def test_logs_cover_every_verdict_code_and_preset() -> None:
    assert len(LOG_FILES) >= 20
    codes: set[str] = set()
    presets: set[str] = set()
    options: set[str] = set()
    for path in LOG_FILES:
        doc = json.loads(path.read_text())
        rules = doc["rules"]
        presets.add(rules if isinstance(rules, str) else rules["preset"])
        if isinstance(rules, dict):
            options |= set(rules) - {"preset"}
        codes |= {s["expect"]["illegal"] for s in doc["steps"] if isinstance(s.get("expect"), dict)}
    assert codes == {c.value for c in Code}
    assert presets == {"classic", "dominos-cc", "cardinal"}
    assert options >= {"set", "close_doubles", "positive_scoring", "no_foreign_trains_first_turn", "double_blank"}


@pytest.mark.parametrize("name", ["double-chain-in-reverse", "cardinal-first-turn"])
def test_console_script_text_output(name: str) -> None:
    proc = run_script(LOGS / f"{name}.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = len(json.loads((LOGS / f"{name}.json").read_text())["steps"])
    assert proc.stdout.splitlines()[-1] == f"{steps} steps, 0 with mismatches"
    assert "illegal open-double" in proc.stdout or "illegal not-your-turn" in proc.stdout


# ------------------------------------------------------------- broken logs
GOOD_START = [
    {"act": "start", "engine": 12, "first": "Ana"},
    {"act": "play", "player": "Ana", "tile": [12, 5], "train": "Ana"},
]


def write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "log.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def log(*steps: dict[str, Any], rules: Any = "classic", players: Any = ("Ana", "Ben", "Cy")) -> dict[str, Any]:
    return {"rules": rules, "players": list(players), "steps": [*GOOD_START, *steps]}


def test_expect_mismatch_exits_1_and_names_the_step(tmp_path: Path) -> None:
    path = write(tmp_path, log({"act": "play", "player": "Ben", "tile": [5, 7], "train": "Ben", "expect": "ok"}))
    proc = run_script(path, "--json")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    last = json.loads(proc.stdout.splitlines()[-1])
    assert last["step"] == 2 and last["code"] == "no-match"
    assert last["mismatch"] == ["expect: wanted ok, got illegal no-match"]
    assert "5|7 does not match Ben's train, which ends in 12" in last["message"]


def test_then_mismatch_exits_1_and_names_the_fact(tmp_path: Path) -> None:
    path = write(tmp_path, log({"act": "draw", "player": "Ben", "then": {"turn": "Cy", "markers": []}}))
    proc = run_script(path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert '   2  draw Ben' in proc.stdout
    assert 'MISMATCH then.turn: wanted "Cy", got "Ben"' in proc.stdout
    assert "then.markers" not in proc.stdout
    assert proc.stdout.splitlines()[-1] == "3 steps, 1 with mismatches"


def test_wrong_expected_code_is_a_mismatch(tmp_path: Path) -> None:
    path = write(tmp_path, log({"act": "play", "player": "Ben", "tile": [12, 5], "train": "Ben",
                                "expect": {"illegal": "no-match"}}))
    proc = run_script(path, "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout.splitlines()[-1])["mismatch"] == [
        "expect: wanted illegal no-match, got illegal duplicate-tile"
    ]


MALFORMED = [
    ("bad JSON", '{"rules": "classic", "players": ["Ana", "Ben"], "steps": [', "file: not valid JSON (line 1"),
    ("deeply nested JSON", "[" * 100_000, "file: not valid JSON"),
    ("not an object", "[1, 2]", "log: must be a JSON object"),
    ("unknown act", log({"act": "jump", "player": "Ben"}), "step 2.act: unknown act 'jump'"),
    ("missing field", log({"act": "draw"}), "step 2.player: is missing"),
    ("missing tile", log({"act": "play", "player": "Ben", "train": "Ben"}), "step 2.tile: is missing"),
    ("missing act", log({"player": "Ben"}), "step 2.act: is missing"),
    ("wrong type", log({"act": "start", "engine": "11", "first": "Ben"}), "step 2.engine: must be a whole number"),
    ("wrong type bool", log({"act": "start", "engine": True, "first": "Ben"}), "step 2.engine: must be a whole"),
    ("wrong train type", log({"act": "play", "player": "Ben", "tile": [12, 1], "train": 3}),
     "step 2.train: must be a string"),
    ("step not an object", log("draw"), "step 2: a step must be an object"),
    ("score leaving out a player", log({"act": "out", "player": "Ana"}, {"act": "score", "hands": {"Ben": 3}}),
     "step 3.hands: no hand given for Cy"),
    ("start hands leaving out a player",
     {"rules": "classic", "players": ["Ana", "Ben"], "steps": [{"act": "start", "engine": 12, "first": "Ana",
                                                                "hands": {"Ana": 3}}]},
     "step 0.hands: no hand size given for Ben"),
    ("negative pip total", log({"act": "out", "player": "Ana"}, {"act": "score", "hands": {"Ben": -3, "Cy": 1}}),
     "step 3.hands.Ben: a pip total cannot be negative"),
    ("unknown verdict code", log({"act": "draw", "player": "Ben", "expect": {"illegal": "cheating"}}),
     "step 2.expect.illegal: unknown verdict code 'cheating'"),
    ("unknown state fact", log({"act": "draw", "player": "Ben", "then": {"weather": "fine"}}),
     "step 2.then.weather: is not a state fact"),
    ("missing players", {"rules": "classic", "steps": []}, "log.players: is missing"),
    ("too few players for the preset", log(rules="cardinal"), "log.players: cardinal is for 4-10 players, not 3"),
    ("rules neither a name nor an object", log(rules=[1]), "log.rules: must be a preset name or an object"),
    ("unknown rule option", log(rules={"preset": "classic", "speed": 3}), "log.rules.speed: is not a rule option"),
    ("unsupported set", log(rules={"preset": "classic", "set": 7}), "log.rules.set: must be one of 6, 9, 12, 15, 18"),
    ("steps not a list", {"rules": "classic", "players": ["Ana", "Ben"], "steps": {}}, "log.steps: must be a list"),
]


@pytest.mark.parametrize(("doc", "where"), [(d, w) for _, d, w in MALFORMED], ids=[n for n, _, _ in MALFORMED])
def test_malformed_log_exits_2_naming_step_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: Any, where: str
) -> None:
    path = write(tmp_path, doc)
    proc = run_script(path, "--json")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert proc.stderr.startswith(f"{path}: not a valid table log: ")
    assert where in proc.stderr
    assert main(["rules", "check", str(path)]) == 2  # the text report fails the same way
    captured = capsys.readouterr()
    assert captured.out == "" and where in captured.err


def test_missing_file_exits_2(tmp_path: Path) -> None:
    proc = run_script(tmp_path / "nowhere.json")
    assert proc.returncode == 2 and "cannot read the table log" in proc.stderr and "Traceback" not in proc.stderr
