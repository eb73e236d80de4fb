"""The stored game: append, undo, replay and resume, and a writer killed (SIGKILL) mid-game."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorekeeper import Action, Draw, Game, Play, RulesError, Start, preset, tablelog
from scorekeeper.actions import action_to_json
from scorekeeper.simulate import Simulator, random_players
from scorekeeper.store import Store

PLAYERS = random_players(3)


def simulated_actions(seed: int, rounds: int) -> list[Action]:
    """The accepted actions of a random legal game (illegal attempts left out)."""
    sim = Simulator(preset("classic"), PLAYERS, random.Random(seed))
    return [s.action for s in sim.game_steps(rounds=rounds) if s.illegal is None]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "var" / "games.db")
    yield s
    s.close()


def test_append_load_and_replay(store: Store) -> None:
    actions = simulated_actions(seed=1, rounds=1)
    game_id = store.new_game("classic", PLAYERS)
    live = Game(preset("classic"), PLAYERS)
    for i, action in enumerate(actions):
        live.push(action)
        assert store.append(game_id, action) == i
    stored = store.load(game_id)
    assert list(stored.actions) == actions
    assert (stored.rules_spec, stored.players, stored.ended) == ("classic", tuple(PLAYERS), None)
    assert stored.replay().state() == live.state()
    results = tablelog.check(tablelog.parse(stored.table_log()))
    assert len(results) == len(actions) and all(r.error is None and not r.mismatch for r in results)


def test_undo_removes_only_the_last_action(store: Store) -> None:
    game_id = store.new_game({"preset": "classic", "close_doubles": "reverse"}, ["Ana", "Ben"])
    assert store.undo(game_id) is None
    first = [Start(12, "Ana"), Play("Ana", (12, 5), "Ana"), Draw("Ben")]
    for action in first:
        store.append(game_id, action)
    assert store.undo(game_id) == Draw("Ben")
    assert list(store.load(game_id).actions) == first[:2]
    assert store.load(game_id).replay().turn_player == "Ben"
    assert store.append(game_id, Play("Ben", (12, 3), "Ben")) == 2
    assert store.load(game_id).replay().state().ends["Ben"] == 3
    assert store.undo(game_id) == Play("Ben", (12, 3), "Ben")
    assert store.undo(game_id) == Play("Ana", (12, 5), "Ana")
    assert store.undo(game_id) == Start(12, "Ana")
    assert store.undo(game_id) is None
    assert store.load(game_id).replay().phase == "idle"


def test_resume_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "games.db"
    actions = simulated_actions(seed=2, rounds=1)
    with_store = Store(path)
    game_id = with_store.new_game("classic", PLAYERS)
    for action in actions[:30]:
        with_store.append(game_id, action)
    with_store.close()

    reopened = Store(path)
    assert reopened.current_game_id() == game_id
    assert list(reopened.load(game_id).actions) == actions[:30]
    for action in actions[30:]:
        reopened.append(game_id, action)
    reopened.end_game(game_id)
    assert reopened.current_game_id() is None
    assert reopened.load(game_id).ended is not None
    second = reopened.new_game("cardinal", ["A", "B", "C", "D"])
    assert reopened.current_game_id() == second and reopened.game_ids() == [game_id, second]
    assert list(reopened.load(game_id).actions) == actions
    reopened.close()


def test_store_is_in_wal_mode_and_refuses_a_game_the_engine_refuses(store: Store) -> None:
    raw = sqlite3.connect(store.path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()
    with pytest.raises(RulesError):
        store.new_game("cardinal", ["Ana", "Ben"])
    with pytest.raises(KeyError):
        store.load(99)
    assert store.game_ids() == []


# ------------------------------------------------------------ the kill test
WRITER = r"""
import json, sys
from scorekeeper.store import Store
from scorekeeper.tablelog import parse_action

db, plan = sys.argv[1], sys.argv[2]
doc = json.load(open(plan))
expected = [parse_action(a, "plan") for a in doc["actions"]]
store = Store(db)
game_id = store.current_game_id() or store.new_game(doc["rules"], doc["players"])
done = store.load(game_id).actions
assert list(done) == expected[:len(done)], "the stored game is not a prefix of the plan"
print("ready", len(done), flush=True)
for action in expected[len(done):]:
    sys.stdin.readline()  # paced by the test, so the kill lands in an append; at end of input it runs on
    seq = store.append(game_id, action)  # returns once committed
    print(seq, flush=True)
print("done", flush=True)
"""


def check_database(path: Path, expected: list[Action], committed: int) -> int:
    """No committed action lost, no half action stored: every row parses, in order, and replays legally."""
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = raw.execute("SELECT seq, action FROM actions ORDER BY seq").fetchall()
    raw.close()
    assert [seq for seq, _ in rows] == list(range(len(rows)))
    for seq, text in rows:
        assert json.loads(text) == action_to_json(expected[seq])
    store = Store(path)
    stored = store.load(store.current_game_id())  # type: ignore[arg-type]
    store.close()
    assert len(stored.actions) >= committed, f"lost committed actions: {len(stored.actions)} < {committed}"
    assert list(stored.actions) == expected[: len(stored.actions)]
    stored.replay()  # every stored action is still legal, in order
    return len(stored.actions)


def test_sigkill_loses_no_committed_action_and_never_half_of_one(tmp_path: Path) -> None:
    expected = simulated_actions(seed=7, rounds=2)
    kills_wanted, most_between_kills = 6, 20
    assert len(expected) > kills_wanted * (most_between_kills + 5)  # the game outlasts the kills
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"rules": "classic", "players": PLAYERS,
                                "actions": [action_to_json(a) for a in expected]}))
    db = tmp_path / "games.db"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    rng = random.Random(7)
    committed = 0  # actions the writer has reported committed
    kills = 0
    while True:
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(plan)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        ready = proc.stdout.readline().split()
        assert ready[:1] == ["ready"], proc.stderr.read() if proc.stderr else ""
        assert int(ready[1]) == committed
        if kills == kills_wanted:
            proc.stdin.close()  # the rest of the game without pause
            break
        for _ in range(rng.randint(0, most_between_kills)):
            proc.stdin.write("go\n")
            proc.stdin.flush()
            seq = int(proc.stdout.readline())
            assert seq == committed
            committed += 1
        proc.stdin.write("go\n")  # one more append, and the kill anywhere in it (a writer left to run
        proc.stdin.flush()  # freely could finish the whole game before the kill on a fast disk)
        time.sleep(rng.uniform(0, 0.004))
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        proc.stdin.close()
        for line in proc.stdout.read().splitlines():  # reports written before the kill, not yet read
            assert int(line) == committed
            committed += 1
        proc.stdout.close()
        proc.stderr.close()  # type: ignore[union-attr]
        kills += 1
        stored = check_database(db, expected, committed)
        # the kill may land after a commit and before its report: then one more action is stored
        assert stored in (committed, committed + 1)
        committed = stored

    # read on through the text stream: readline may already hold the next reports in its buffer, which
    # communicate() would skip, as it reads the pipe itself (a CI run on a busy machine lost three that way)
    out = proc.stdout.read()
    err = proc.stderr.read()  # type: ignore[union-attr]
    assert proc.wait(timeout=120) == 0, err
    remaining = out.split()
    assert remaining[-1] == "done"
    assert [int(s) for s in remaining[:-1]] == list(range(committed, len(expected)))
    assert check_database(db, expected, len(expected)) == len(expected)
