"""``domino-hub demo`` (the simulated evening) and ``domino-hub bench web`` (phones under load)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from argparse import Namespace

import pytest

from hub.bus import EventBus
from hub.commands.demo import DemoDriver
from hub.events import AlertCleared, HandCounts, IllegalAction
from hub.table import Table
from scorekeeper import Score, rules_from_spec
from scorekeeper.store import Store


@pytest.fixture
def table():
    store = Store(":memory:")
    t = Table(store, EventBus())
    yield t
    store.close()


def record(table: Table) -> list:
    seen: list = []
    table.bus.subscribe(lambda env: seen.append(env.event), "record", maxsize=100_000)
    return seen


def quiet(_line: str) -> None:
    pass


def test_the_demo_plays_a_whole_game_through_the_table(table):
    seen = record(table)
    driver = DemoDriver(table, random.Random(3), wait=lambda _s: False, log=quiet, illegal_rate=0.1)
    assert driver.run(games=1) == 1
    stored = table.store.load(table.store.game_ids()[0])
    assert stored.ended is not None
    game = stored.replay()
    assert game.game_over and len(game.rounds) == len(rules_from_spec(stored.rules_spec).engines)
    time.sleep(0.2)
    alerts = [e.alert.id for e in seen if isinstance(e, IllegalAction)]
    cleared = [e.alert_id for e in seen if isinstance(e, AlertCleared)]
    assert alerts and sorted(alerts) == sorted(cleared)  # every illegal play was taken back
    counts = [e for e in seen if isinstance(e, HandCounts)]
    assert len(counts) == len(game.rounds)
    assert [dict(c.counts) for c in counts] == [dict(r.scores) for r in game.rounds]


def test_the_demo_plays_a_game_set_up_from_the_page(table):
    table.new_game({"preset": "classic", "set": 6}, ["Xi", "Yu"])
    driver = DemoDriver(table, random.Random(1), wait=lambda _s: False, log=quiet)
    assert driver.run(games=1) == 1
    stored = table.store.load(table.store.game_ids()[0])
    assert stored.players == ("Xi", "Yu") and len(stored.replay().rounds) == 7


def test_the_demo_keeps_the_scores_the_host_confirmed(table):
    host_scores = []
    calls = {"n": 0}

    def wait(_seconds: float) -> bool:
        calls["n"] += 1
        assert calls["n"] < 5000, "the demo should have gone on playing"
        state = table.state()
        if state is not None and state.phase == "ended" and not host_scores:
            hands = {p: 1 for p in state.players if p != state.went_out}
            assert table.submit(Score(hands), source="web").ok  # the host confirms, correcting the camera
            host_scores.append(hands)
        return bool(host_scores) and table.state() is not None and len(table.state().rounds) >= 2

    DemoDriver(table, random.Random(5), wait=wait, log=quiet).run(games=1)
    first_round = table.state().rounds[0]
    assert {p: s for p, s in first_round.scores.items() if p in host_scores[0]} == host_scores[0]


def test_the_demo_leaves_a_game_changed_from_the_page_and_starts_another(table):
    calls = {"n": 0}
    log: list[str] = []

    def wait(_seconds: float) -> bool:
        calls["n"] += 1
        assert calls["n"] < 10_000, "the demo should have started another game"
        if calls["n"] == 15:
            table.undo(source="web")  # someone takes a play back from the page
        if calls["n"] == 25:
            table.end_game()  # ... and later ends that game
        return False

    driver = DemoDriver(table, random.Random(2), wait=wait, log=log.append)
    assert driver.run(games=1) == 1
    assert any("the page changed the game" in line for line in log)
    first, second = table.store.game_ids()[:2]
    assert not table.store.load(first).replay().game_over  # left to the page
    assert table.store.load(second).replay().game_over


def test_domino_hub_demo_serves_the_page_until_stopped(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hub.cli", "demo", "--port", "0", "--host", "127.0.0.1", "--speed", "40",
         "--seed", "4", "--pin", "1234", "--db", str(tmp_path / "demo.sqlite")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("domino-hub demo: the page is at http://127.0.0.1:"), first
        url = first.rsplit(" ", 1)[1].strip()
        deadline = time.monotonic() + 10
        game = None
        while game is None or not game["trains"][0]["tiles"] and time.monotonic() < deadline:
            time.sleep(0.2)
            with urllib.request.urlopen(url + "api/state", timeout=5) as r:
                game = json.loads(r.read())["game"]
        assert game is not None and game["phase"] in ("playing", "ended", "idle")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_bench_web_holds_every_phone_and_reports_percentiles(capsys):
    from hub.commands.bench_web import run

    run(Namespace(clients=3, seconds=1.5, rate=8.0, seed=1, json=True))
    report = json.loads(capsys.readouterr().out)
    assert report["reports"] == 3 and report["dropped"] == [] and report["dropped_server_side"] == 0
    assert report["actions"] > 3 and report["deliveries"] == report["expected_deliveries"]
    assert 0 < report["p50_ms"] <= report["p95_ms"] <= report["p99_ms"] <= report["max_ms"]
