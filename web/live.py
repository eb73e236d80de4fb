"""The web's one bus subscriber: the live model, and the Server-Sent Events streams fed from it.

One subscription serves every phone. Each event is turned into a model patch and encoded once,
then handed to each open stream's own bounded queue, so thirty phones cost thirty queue puts,
not thirty JSON encodings, and a phone that stops reading is dropped instead of holding up the
others (its browser reconnects and catches up from ``Last-Event-ID``).
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from hub.bus import Envelope, EventBus
from hub.events import (
    ActionApplied,
    ActionUndone,
    Alert,
    AlertCleared,
    CameraStatus,
    GameEnded,
    GameOpened,
    HandCounts,
    IllegalAction,
    Question,
    QuestionClosed,
)
from hub.table import Table
from scorekeeper import GameState, Rules, Score, Start, rules_from_spec
from scorekeeper.store import Store

from .model import (
    action_json,
    alert_json,
    alert_params,
    camera_json,
    counted_json,
    game_json,
    question_json,
    questions_json,
)

HELLO = b"retry: 2000\n: connected\n\n"  # the first bytes: they push the headers out at once
PING = b": ping\n\n"


class StreamsFull(RuntimeError):
    """Every stream slot is taken; the phone should retry shortly."""


class QuestionGone(LookupError):
    """The question was answered already or never asked."""


class BadAnswer(ValueError):
    """The answer is not one of the question's choices."""


class _Client:
    """One open ``/events`` stream: a bounded queue of encoded messages."""

    def __init__(self, size: int) -> None:
        self.queue: queue.Queue[bytes | None] = queue.Queue(size)
        self.overflowed = False

    def offer(self, data: bytes | None) -> None:
        try:
            self.queue.put_nowait(data)
        except queue.Full:
            # too slow to keep up: end its stream; the browser reconnects and catches up
            self.overflowed = True
            while True:
                try:
                    self.queue.get_nowait()
                except queue.Empty:
                    break
            self.queue.put_nowait(None)


def encode(event_id: str, kind: str, payload: Any) -> bytes:
    data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return f"id: {event_id}\nevent: {kind}\ndata: {data}\n\n".encode()


class Live:
    """What the pages show beyond the Table's own state, kept from the bus, and the open streams."""

    def __init__(
        self,
        table: Table,
        bus: EventBus,
        max_streams: int = 40,
        client_queue: int = 256,
        history: int = 2000,
        answer_question: Callable[[int, str], object] | None = None,
    ) -> None:
        self.table = table
        self.bus = bus
        self._answerer = answer_question
        self.max_streams = max_streams
        self.epoch = secrets.token_hex(4)  # ids from an earlier run of the hub never match
        self._client_queue = client_queue
        self._lock = threading.RLock()
        self._clients: set[_Client] = set()
        self._encoded: deque[tuple[int, bytes]] = deque(maxlen=history)
        self._processed = bus.last_id
        self._rules: dict[int, Rules | None] = {}
        self._alerts: dict[int, Alert] = dict(table.alerts)
        self._params: dict[int, dict[str, Any]] = {}
        self._last_state: GameState | None = table.state()
        self._answered: set[int] = set()
        self._stored: tuple[tuple[int, bool], dict[str, Any] | None] | None = None
        self.camera = CameraStatus("unknown")
        self.questions: dict[int, Question] = {}
        self.counted: HandCounts | None = None
        self.dropped_streams = 0
        self._sub = bus.subscribe(self._handle, "web", maxsize=4000)

    # ---------------------------------------------------------------- model
    def model(self) -> dict[str, Any]:
        """The whole model, read from the Table itself (so a change a request just made shows)."""
        game_id, state, alerts = self._table_snapshot()
        if state is not None and game_id is not None:
            game = game_json(game_id, state, self.rules_for(game_id))
        else:
            game = self._newest_stored_game()
        with self._lock:
            return {
                "game": game,
                "alerts": [self._alert_json(a, state) for a in sorted(alerts, key=lambda a: a.id)],
                "camera": camera_json(self.camera),
                "questions": questions_json(self.questions.values()),
                "counted": counted_json(self.counted),
            }

    def _table_snapshot(self) -> tuple[int | None, GameState | None, list[Alert]]:
        for _ in range(5):  # another thread may open a new game between the reads
            before = self.table.game_id
            state = self.table.state()
            alerts = list(self.table.alerts.values())
            if self.table.game_id == before:
                return before, state, alerts
        return self.table.game_id, self.table.state(), list(self.table.alerts.values())

    def _newest_stored_game(self) -> dict[str, Any] | None:
        """With no game open, the last one played: the page shows its final table and winner."""
        store: Store = self.table.store
        ids = store.game_ids()
        if not ids:
            return None
        try:
            stored = store.load(ids[-1])
            key = (stored.id, stored.ended is not None)
            cached = self._stored
            if cached is not None and cached[0] == key:
                return cached[1]
            game = game_json(stored.id, stored.replay().state(), rules_from_spec(stored.rules_spec), ended=key[1])
        except Exception:  # an unreadable old game must not take the page down
            return None
        self._stored = (key, game)
        return game

    def rules_for(self, game_id: int) -> Rules | None:
        with self._lock:
            if game_id in self._rules:
                return self._rules[game_id]
        try:
            spec = self.table.rules_spec if self.table.game_id == game_id else self.table.store.load(game_id).rules_spec
            rules: Rules | None = rules_from_spec(spec)
        except Exception:
            rules = None
        with self._lock:
            self._rules[game_id] = rules
        return rules

    def _alert_json(self, alert: Alert, state: GameState | None) -> dict[str, Any]:
        params = self._params.get(alert.id)
        if params is None:
            params = alert_params(alert, state)
        return alert_json(alert, params)

    # ---------------------------------------------------------------- events
    def _handle(self, env: Envelope) -> None:
        with self._lock:
            kind, payload = self._apply(env)
            payload["at"] = env.time
            data = encode(f"{self.epoch}-{env.id}", kind, payload)
            self._encoded.append((env.id, data))
            self._processed = env.id
            clients = list(self._clients)
        for client in clients:
            client.offer(data)

    def _apply(self, env: Envelope) -> tuple[str, dict[str, Any]]:
        """Update the view with one event and return the patch every phone applies to its model."""
        ev = env.event
        if isinstance(ev, (GameOpened, ActionApplied, ActionUndone, GameEnded)):
            return "update", self._apply_game(ev)
        if isinstance(ev, IllegalAction):
            self._alerts[ev.alert.id] = ev.alert
            self._params[ev.alert.id] = alert_params(ev.alert, self._last_state)
            alert = alert_json(ev.alert, self._params[ev.alert.id])
            return "update", {"event": {"type": "illegal", "alert": alert, "source": ev.source},
                              "model": {"alerts": self._alerts_json()}}
        if isinstance(ev, AlertCleared):
            self._alerts.pop(ev.alert_id, None)
            self._params.pop(ev.alert_id, None)
            return "update", {"event": {"type": "alert-cleared", "id": ev.alert_id, "reason": ev.reason},
                              "model": {"alerts": self._alerts_json()}}
        if isinstance(ev, CameraStatus):
            self.camera = ev
            return "update", {"event": {"type": "camera"}, "model": {"camera": camera_json(ev)}}
        if isinstance(ev, Question):
            self.questions[ev.id] = ev
            self._answered.discard(ev.id)
            return "update", {"event": {"type": "question", "question": question_json(ev)},
                              "model": {"questions": questions_json(self.questions.values())}}
        if isinstance(ev, QuestionClosed):
            self.questions.pop(ev.id, None)
            return "update", {"event": {"type": "question-closed", "id": ev.id, "answer": ev.answer},
                              "model": {"questions": questions_json(self.questions.values())}}
        if isinstance(ev, HandCounts):
            self.counted = ev
            return "update", {"event": {"type": "counted"}, "model": {"counted": counted_json(ev)}}
        return "update", {"event": {"type": type(ev).__name__}, "model": {}}

    def _apply_game(self, ev: GameOpened | ActionApplied | ActionUndone | GameEnded) -> dict[str, Any]:
        model: dict[str, Any] = {}
        event: dict[str, Any] = {"game_id": ev.game_id}
        if isinstance(ev, (GameOpened, GameEnded)):
            self._alerts.clear()
            self._params.clear()
            self.counted = None
            model.update(alerts=[], counted=None)
            event["type"] = "opened" if isinstance(ev, GameOpened) else "ended"
            if isinstance(ev, GameOpened):
                self._rules.pop(ev.game_id, None)
        else:
            event.update(type="applied" if isinstance(ev, ActionApplied) else "undone",
                         action=action_json(ev.action), source=ev.source)
            if isinstance(ev, ActionApplied):
                event["seq"] = ev.seq
                if isinstance(ev.action, (Start, Score)):
                    self.counted = None
                    model["counted"] = None
        self._last_state = ev.state
        model["game"] = game_json(ev.game_id, ev.state, self.rules_for(ev.game_id), ended=isinstance(ev, GameEnded))
        return {"event": event, "model": model}

    def _alerts_json(self) -> list[dict[str, Any]]:
        return [alert_json(a, self._params.get(a.id)) for a in sorted(self._alerts.values(), key=lambda a: a.id)]

    # -------------------------------------------------------------- questions
    def answer(self, question_id: int, answer: str) -> None:
        """Settle an open question. With an answerer (the camera's reconciler) it judges the answer
        and closes the question itself; without one the answer must be a choice and is published."""
        with self._lock:
            question = self.questions.get(question_id)
            if question is None or question_id in self._answered:
                raise QuestionGone(f"question {question_id} is not open")
            if self._answerer is None and answer not in question.choices:
                raise BadAnswer(f"must be one of: {', '.join(question.choices)}")
            self._answered.add(question_id)
        if self._answerer is None:
            self.bus.publish(QuestionClosed(question_id, answer))
        else:
            try:
                self._answerer(question_id, answer)
            except KeyError as e:
                raise QuestionGone(f"question {question_id} is not open") from e
            except ValueError as e:
                with self._lock:
                    self._answered.discard(question_id)
                raise BadAnswer(str(e)) from e
            except TimeoutError:  # the camera loop has not taken it yet: the question stays open
                with self._lock:
                    self._answered.discard(question_id)
                raise
        with self._lock:
            self.questions.pop(question_id, None)  # gone from /api/state at once, not when the bus gets round to it

    # ---------------------------------------------------------------- streams
    def open_stream(self, last_event_id: str | None, heartbeat: float = 15.0) -> Iterator[bytes]:
        """A phone's stream: missed events after ``last_event_id`` (or the whole model), then live ones."""
        client = _Client(self._client_queue)
        with self._lock:
            if len(self._clients) >= self.max_streams:
                raise StreamsFull(f"{self.max_streams} phones are already connected")
            self._clients.add(client)
            processed = self._processed
            missed = self._missed(last_event_id, processed)
        return self._stream(client, processed, missed, heartbeat)

    def _stream(self, client: _Client, processed: int, missed: list[bytes] | None,
                heartbeat: float) -> Iterator[bytes]:
        try:
            yield HELLO
            if missed is None:
                yield encode(f"{self.epoch}-{processed}", "state", {"model": self.model()})
            else:
                yield from missed
            while True:
                try:
                    data = client.queue.get(timeout=heartbeat)
                except queue.Empty:
                    yield PING
                    continue
                if data is None:
                    return
                yield data
        finally:
            with self._lock:
                self._clients.discard(client)
                if client.overflowed:
                    self.dropped_streams += 1

    def _missed(self, last_event_id: str | None, processed: int) -> list[bytes] | None:
        """The encoded events after ``last_event_id``; None when they cannot all be replayed."""
        if not last_event_id:
            return None
        epoch, _, number = last_event_id.strip().partition("-")
        if epoch != self.epoch or not number.isdigit():
            return None
        last = int(number)
        if last > processed:
            return None
        if last == processed:
            return []
        if self.bus.since(last) is None:
            return None
        missed = [(i, d) for i, d in self._encoded if i > last]
        if [i for i, _ in missed] != list(range(last + 1, processed + 1)):
            return None
        return [d for _, d in missed]

    @property
    def open_streams(self) -> int:
        with self._lock:
            return len(self._clients)

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait until every event published so far has reached the streams (for tests)."""
        return self._sub.drain(timeout)

    def close(self) -> None:
        """Stop listening and end every open stream, so the server can stop at once."""
        self._sub.close()
        with self._lock:
            clients = list(self._clients)
        for client in clients:
            client.offer(None)
