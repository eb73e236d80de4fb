"""The hub's LEDs and buzzer: what the table sees without looking at a phone.

One LED per train slot shows that train's state, most urgent first:

- fast blink: an illegal play was laid on this train and is still there (the buzzer beeps too);
- slow blink: the train holds an open double that must be covered;
- steady: the train carries a marker (its owner passed);
- dark: nothing to say.

The LEDs follow the bus only, so they show exactly what the phones show. gpiozero
chooses its pin driver from the environment (``GPIOZERO_PIN_FACTORY``; ``mock`` in
tests and the demo), so this module never knows whether real pins are there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

from gpiozero import LED, Buzzer

from scorekeeper import MEXICAN, GameState

from .bus import Envelope, EventBus, Subscription
from .config import SLOTS, CalibrationConfig, PinsConfig
from .events import ActionApplied, ActionUndone, AlertCleared, GameEnded, GameOpened, IllegalAction

log = logging.getLogger(__name__)


class Mode(IntEnum):
    """What one LED shows; a higher mode wins when a train has several things to say."""

    DARK = 0
    MARKER = 1
    OPEN_DOUBLE = 2
    ALERT = 3


@dataclass(frozen=True)
class Timing:
    """Blink and beep patterns in seconds (on, off). Slow enough to tell apart across a table."""

    open_double: tuple[float, float] = (0.5, 0.5)
    alert: tuple[float, float] = (0.1, 0.1)
    buzzer: tuple[float, float] = (0.15, 0.85)
    refused: float = 0.3  # one beep when the button's action is refused
    chase_step: float = 0.08


def train_slots(state: GameState, calibration: CalibrationConfig) -> dict[str, int]:
    """Each train's hub slot: from the calibration, else seating order with the Mexican train next.

    Without a calibration, player 1 sits at slot 1, player 2 at slot 2, ..., and the
    Mexican train takes the slot after the last player.
    """
    trains = [*state.players, MEXICAN]
    if calibration.trains:
        return {t: s for t in trains if (s := calibration.slot_of(t)) is not None}
    return {t: i + 1 for i, t in enumerate(trains) if i < SLOTS}


class Lights:
    """Drives one LED per configured slot (or train) and the buzzer from the bus's events."""

    def __init__(
        self,
        bus: EventBus,
        pins: PinsConfig,
        calibration: CalibrationConfig,
        timing: Timing = Timing(),
    ) -> None:
        self.timing = timing
        self._bus = bus
        self._calibration = calibration
        self._lock = threading.Lock()
        self.leds: dict[int | str, LED] = {}
        self.buzzer: Buzzer | None = None
        try:
            for key, pin in pins.leds.items():
                self.leds[key] = LED(pin, active_high=pins.active_high, initial_value=False)
            self.buzzer = (
                None if pins.buzzer is None else Buzzer(pins.buzzer, active_high=pins.active_high, initial_value=False)
            )
        except Exception:
            self._close_devices()
            raise
        self._modes: dict[int | str, Mode] = dict.fromkeys(self.leds, Mode.DARK)
        self._buzzing = False
        self._state: GameState | None = None
        self._alerts: dict[int, str | None] = {}  # alert id -> train it was laid on
        self.subscription: Subscription | None = None

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Run the start-up chase (so a glance shows every LED works), go dark, then follow the bus."""
        for led in self._ordered_leds():
            led.on()
            time.sleep(self.timing.chase_step)
            led.off()
        self.subscription = self._bus.subscribe(self._on_event, "lights")

    def close(self) -> None:
        if self.subscription is not None:
            self.subscription.close()
            self.subscription = None
        with self._lock:
            self._close_devices()

    def _close_devices(self) -> None:
        for device in [*self.leds.values(), self.buzzer]:
            if device is not None:
                device.close()

    def _ordered_leds(self) -> list[LED]:
        slots = sorted(k for k in self.leds if isinstance(k, int))
        names = sorted(k for k in self.leds if isinstance(k, str))
        return [self.leds[k] for k in (*slots, *names)]

    # ------------------------------------------------------------- feedback
    def beep_refused(self) -> None:
        """One beep: the button was pressed but its action could not be taken. Silent during an alert."""
        with self._lock:
            if self.buzzer is None or self._buzzing:
                return
            self.buzzer.beep(self.timing.refused, 0, n=1)

    # --------------------------------------------------------------- events
    def _on_event(self, env: Envelope) -> None:
        event = env.event
        with self._lock:
            if isinstance(event, GameOpened):
                self._state, self._alerts = event.state, {}
            elif isinstance(event, (ActionApplied, ActionUndone)):
                self._state = event.state
            elif isinstance(event, IllegalAction):
                self._alerts[event.alert.id] = event.alert.train
            elif isinstance(event, AlertCleared):
                self._alerts.pop(event.alert_id, None)
            elif isinstance(event, GameEnded):
                self._state, self._alerts = None, {}
            else:
                return
            self._show(self._wanted())

    def _wanted(self) -> dict[int | str, Mode]:
        """The mode every LED should show now."""
        modes: dict[int | str, Mode] = dict.fromkeys(self.leds, Mode.DARK)
        state = self._state
        if state is None:
            return modes
        slots = train_slots(state, self._calibration)

        def raise_to(train: str, mode: Mode) -> None:
            key = train if train in self.leds else slots.get(train)
            if key in modes:
                modes[key] = max(modes[key], mode)

        if state.phase == "playing":
            for train in state.markers:
                raise_to(train, Mode.MARKER)
            for double in state.open_doubles:
                raise_to(double.train, Mode.OPEN_DOUBLE)
        for train in self._alerts.values():
            if train is not None:
                raise_to(train, Mode.ALERT)
        return modes

    def _show(self, modes: Mapping[int | str, Mode]) -> None:
        for key, mode in modes.items():
            if self._modes[key] == mode:
                continue  # leave a running blink undisturbed
            led = self.leds[key]
            if mode == Mode.DARK:
                led.off()
            elif mode == Mode.MARKER:
                led.on()
            elif mode == Mode.OPEN_DOUBLE:
                led.blink(*self.timing.open_double)
            else:
                led.blink(*self.timing.alert)
            self._modes[key] = mode
        buzz = bool(self._alerts)
        if self.buzzer is not None and buzz != self._buzzing:
            if buzz:
                self.buzzer.beep(*self.timing.buzzer)
            else:
                self.buzzer.off()
        self._buzzing = buzz
