"""Who may change the game: anyone with the table PIN, from the page itself.

Watching needs nothing. A change must carry the PIN in the ``X-Table-Pin`` header and a JSON
body. A form or script on another site can send neither without a CORS preflight, which this
app never grants; a request whose ``Origin`` or ``Sec-Fetch-Site`` says it came from another
site is refused outright. There are no cookies to steal or ride on.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections import deque
from urllib.parse import urlsplit

from flask import Request

PIN_HEADER = "X-Table-Pin"


class Refused(Exception):
    """A change that may not be made; carries the HTTP status and what the phone should show."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field


class Guard:
    """The PIN check, with a brake on guessing: too many wrong PINs from one address wait a minute."""

    def __init__(self, pin: str, max_failures: int = 10, window_s: float = 60.0) -> None:
        if not pin or not pin.isascii() or not pin.strip():
            raise ValueError("pin: the table PIN must be a non-empty ASCII string")
        self._pin = pin.strip().encode()
        self._max_failures = max_failures
        self._window = window_s
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, request: Request) -> None:
        """Raise :class:`Refused` unless ``request`` may change the game."""
        self.same_site(request)
        who = request.remote_addr or "?"
        if self._too_many(who):
            raise Refused(429, "too-many-tries", "Too many wrong PINs: wait a minute", "pin")
        given = request.headers.get(PIN_HEADER)
        if not given:
            raise Refused(401, "pin-required", "This needs the table PIN", "pin")
        if not hmac.compare_digest(given.strip().encode(), self._pin):
            self._fail(who)
            raise Refused(403, "wrong-pin", "That is not the table PIN", "pin")

    @staticmethod
    def same_site(request: Request) -> None:
        fetch_site = request.headers.get("Sec-Fetch-Site")
        if fetch_site in ("cross-site", "same-site"):
            raise Refused(403, "cross-site", "Changes are only accepted from this page")
        origin = request.headers.get("Origin")
        if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() != request.host.lower()):
            raise Refused(403, "cross-site", "Changes are only accepted from this page")

    def _too_many(self, who: str) -> bool:
        with self._lock:
            times = self._failures.get(who)
            if not times:
                return False
            cutoff = time.monotonic() - self._window
            while times and times[0] < cutoff:
                times.popleft()
            return len(times) >= self._max_failures

    def _fail(self, who: str) -> None:
        with self._lock:
            if len(self._failures) > 1000:  # bounded: forget the oldest addresses
                self._failures.pop(next(iter(self._failures)))
            self._failures.setdefault(who, deque()).append(time.monotonic())
