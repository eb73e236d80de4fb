"""The camera loop on its own thread: inputs from phones run between frames; it stops when asked."""

from __future__ import annotations

import time

import pytest

from hub.bus import EventBus
from hub.events import Question
from hub.pipeline import Answer, StartRound, start_pipeline
from hub.sources.synthetic import SyntheticSource
from hub.table import Table
from hub.watching import LiveRecording, calibrate, truth_reader
from scorekeeper import Start
from scorekeeper.store import Store


def test_the_threaded_pipeline_asks_who_starts_takes_the_answer_and_stops() -> None:
    source = SyntheticSource(seed=0, width=640, height=480, speed=4.0)
    recording = LiveRecording(source)
    image, first = recording.first_frame()
    bus = EventBus()
    questions: list[Question] = []
    sub = bus.subscribe(lambda env: questions.append(env.event) if isinstance(env.event, Question) else None, "t")
    table = Table(Store(":memory:"), bus)
    table.new_game(recording.rules_spec, list(recording.players))
    handle = start_pipeline(source, truth_reader(recording, 12), table, calibrate(image, first, 5))
    try:
        deadline = time.monotonic() + 30
        while not questions and time.monotonic() < deadline:
            sub.drain()
            time.sleep(0.02)
        (question,) = questions
        assert question.text == "The engine is 12|12. Who goes first?"
        start = next(i for i in recording.game_inputs() if i.act == "start").action
        assert isinstance(start, Start)
        verdict = handle.submit(StartRound(start.first, start.hands), "phone").result(timeout=5)
        assert verdict is not None and verdict.ok
        assert table.state().phase == "playing" and table.state().engine == 12  # type: ignore[union-attr]
        with pytest.raises(KeyError):
            handle.submit(Answer(question.id, start.first), "phone").result(timeout=5)  # answered already: closed
        assert handle.is_alive()
    finally:
        handle.stop()
    assert not handle.is_alive() and handle.error is None
