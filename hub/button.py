"""The hub's one button: a press passes for the player whose turn it is; a 2-second hold undoes.

A pass moves the turn on, so one physical press must never count twice. gpiozero's
``bounce_time`` asks the pin driver to filter contact bounce, but not every driver
does (the mock pins do not), so the button also keeps its own rule: a release counts
as a press only when the button was held down steadily for ``bounce_seconds`` before
it. The short glitches of a bouncing contact never are. A hold acts as soon as it
has lasted ``hold_seconds``, and its release then does nothing.

A button already down when the service starts (a stuck key, a hand resting on it) is
ignored until it has been let go once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from gpiozero import Button

from scorekeeper import Pass

from .config import Pin
from .table import NoGame, Table

log = logging.getLogger(__name__)

HOLD_SECONDS = 2.0
BOUNCE_SECONDS = 0.05


def make_button(pin: Pin, hold_seconds: float = HOLD_SECONDS, bounce_seconds: float = BOUNCE_SECONDS) -> Button:
    """The hub's button: wired from the pin to ground, read through the Pi's internal pull-up."""
    return Button(pin, pull_up=True, bounce_time=bounce_seconds, hold_time=hold_seconds)


class TableButton:
    """Turns presses and holds of a gpiozero Button into table actions (source ``"button"``)."""

    def __init__(
        self,
        table: Table,
        button: Button,
        *,
        bounce_seconds: float = BOUNCE_SECONDS,
        on_refused: Callable[[str], None] | None = None,
    ) -> None:
        self._table = table
        self._bounce = bounce_seconds
        self._on_refused = on_refused
        self._lock = threading.Lock()
        self.button = button
        self._armed = not self.button.is_pressed
        if not self._armed:
            log.warning("the button is down at start-up: it is ignored until it is let go")
        self._pressed_at = time.monotonic()
        self._held = False
        self.button.when_pressed = self._on_press
        self.button.when_held = self._on_hold
        self.button.when_released = self._on_release

    def close(self) -> None:
        self.button.close()

    # ------------------------------------------------------------ pin edges
    def _on_press(self) -> None:
        with self._lock:
            self._pressed_at = time.monotonic()
            self._held = False

    def _on_hold(self) -> None:
        with self._lock:
            if not self._armed or self._held:
                return
            self._held = True
        self.undo()

    def _on_release(self) -> None:
        with self._lock:
            if not self._armed:
                self._armed = True
                log.info("the button was let go: it now works")
                return
            if self._held or time.monotonic() - self._pressed_at < self._bounce:
                return
        self.pass_turn()

    # -------------------------------------------------------------- actions
    def pass_turn(self) -> None:
        """Pass for the player whose turn it is. A refused pass beeps instead of raising an alert."""
        state = self._table.state()
        if state is None or state.turn is None:
            self._refuse("no round is being played, so there is nobody to pass for")
            return
        try:
            verdict = self._table.submit(Pass(state.turn), source="button", alert=False)
        except NoGame as e:
            self._refuse(str(e))
            return
        if verdict.waiting:
            log.info("button: %s's pass waits for the camera's question to be answered", state.turn)
        elif verdict.error is not None:
            self._refuse(verdict.error.message)
        else:
            log.info("button: %s passed", state.turn)

    def undo(self) -> None:
        """Take back the newest press still waiting, or else the last stored action."""
        try:
            action = self._table.undo(source="button")
        except NoGame as e:
            self._refuse(str(e))
            return
        if action is None:
            self._refuse("there is nothing to undo")
        else:
            log.info("button: undid %s", action)

    def _refuse(self, reason: str) -> None:
        log.info("button: refused: %s", reason)
        if self._on_refused is not None:
            self._on_refused(reason)
