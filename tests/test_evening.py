"""The demo's synthetic evening: a game set up from the page is filmed, and the host answers when no phone does.

The truth-reading test double stands in for the models here, so that what is tested is the
evening's own work (adopting the page's game, the host's answers, the page's undo between
frames), fast; the demo's own test runs the real models.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hub.bus import EventBus
from hub.evening import EveningSettings, SyntheticEvening
from hub.events import ActionUndone
from hub.pipeline import Undo
from hub.table import Table
from hub.truth_reader import TruthReader
from scorekeeper import Play, Start
from scorekeeper.store import Store


def wait_until(check: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_game_set_up_from_the_page_is_filmed_and_the_host_answers_for_absent_phones() -> None:
    table = Table(Store(":memory:"), EventBus())
    table.new_game("classic", ["Xi", "Yu", "Zo"])  # set up on the page, not yet played
    game_id = table.game_id
    undone: list[ActionUndone] = []
    sub = table.bus.subscribe(lambda env: undone.append(env.event) if isinstance(env.event, ActionUndone) else None,
                              "test")
    said: list[str] = []
    evening = SyntheticEvening(
        table, table.bus, lambda source, top: TruthReader(source.tiles_for, top=top),
        EveningSettings(seed=3, speed=50.0, size=(640, 480)), say=said.append,
    )
    evening.start()
    try:
        wait_until(lambda: table.game is not None and len(table.game.history) >= 3, 60)
        assert table.game_id == game_id  # filmed for the page's game, not replaced by another
        assert any("filming the game set up from the page" in line for line in said)
        start = table.game.history[0]
        assert isinstance(start, Start)
        assert any(line.startswith(f"  host: {start.first} goes first") for line in said)  # nobody at a phone
        wait_until(lambda: any(isinstance(a, Play) for a in table.game.history), 60)
        # the page's undo is applied by the camera thread, between two frames
        verdict = evening.submit(Undo(), "web").result(timeout=10)
        assert verdict is not None and verdict.ok
        sub.drain()
        assert [e.action for e in undone] == [verdict.action]
    finally:
        evening.stop(timeout=30)  # the frame being drawn and read is finished first (slow on a loaded machine)
    assert not evening.is_alive() and evening.error is None
