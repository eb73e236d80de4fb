"""One in-process event bus. Every subscriber has its own queue and thread, so a slow
phone or a blinking LED never stalls the camera loop that publishes."""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from .events import Event

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Envelope:
    """An event with its bus-wide id (monotonic, used as the SSE ``id``) and publish time."""

    id: int
    time: float
    event: Event


class Subscription:
    def __init__(self, bus: EventBus, name: str, handler: Callable[[Envelope], None], maxsize: int) -> None:
        self.name = name
        self.dropped = 0
        self._bus = bus
        self._handler = handler
        self._queue: queue.Queue[Envelope | None] = queue.Queue(maxsize)
        self._thread = threading.Thread(target=self._run, name=f"bus-{name}", daemon=True)
        self._thread.start()

    def _offer(self, env: Envelope) -> None:
        while True:
            try:
                self._queue.put_nowait(env)
                return
            except queue.Full:
                try:
                    self._queue.get_nowait()  # drop the oldest: never block the publisher
                    self.dropped += 1
                except queue.Empty:
                    pass

    def _run(self) -> None:
        while (env := self._queue.get()) is not None:
            try:
                self._handler(env)
            except Exception:
                log.exception("bus subscriber %s failed on event %s", self.name, env.id)
            finally:
                self._queue.task_done()
        self._queue.task_done()

    def drain(self, timeout: float = 5.0) -> bool:
        """Wait until every event published so far has been handled (for tests and shutdown)."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)
        return True

    def close(self) -> None:
        self._bus._unsubscribe(self)
        self._offer(None)  # type: ignore[arg-type]
        self._thread.join(timeout=2)


class EventBus:
    """Publish/subscribe with a short replay buffer for clients that reconnect."""

    def __init__(self, history: int = 2000) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._subs: list[Subscription] = []
        self._history: deque[Envelope] = deque(maxlen=history)

    def publish(self, event: Event) -> Envelope:
        with self._lock:
            env = Envelope(next(self._ids), time.time(), event)
            self._history.append(env)
            subs = list(self._subs)
        for sub in subs:
            sub._offer(env)
        return env

    def subscribe(self, handler: Callable[[Envelope], None], name: str, maxsize: int = 1000) -> Subscription:
        sub = Subscription(self, name, handler, maxsize)
        with self._lock:
            self._subs.append(sub)
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)

    def since(self, last_id: int) -> list[Envelope] | None:
        """Events after ``last_id``, or None when they are no longer all held (catch up from state)."""
        with self._lock:
            events = list(self._history)
        if not events or last_id >= events[-1].id:
            return []
        if last_id < events[0].id - 1:
            return None
        return [e for e in events if e.id > last_id]

    @property
    def last_id(self) -> int:
        with self._lock:
            return self._history[-1].id if self._history else 0
