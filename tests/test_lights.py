"""Marker LEDs and buzzer, driven through the real Table and bus, read from gpiozero's mock pins.

MockPin keeps every change with the time since the previous one, so the tests read
both what a pin did and how fast it did it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from types import MappingProxyType

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPin

from hub.bus import EventBus
from hub.config import CalibrationConfig, PinsConfig
from hub.lights import Lights, Mode, Timing, train_slots
from hub.table import Table
from scorekeeper import MEXICAN, Draw, GameState, Pass, Play, Start, preset
from scorekeeper.simulate import Simulator
from scorekeeper.store import Store

LED_PINS = {1: 17, 2: 27, 3: 22, 4: 5, 5: 6, 6: 13, 7: 19, 8: 26}
BUZZER = 18
SEATS = CalibrationConfig(trains=MappingProxyType({1: "Ana", 2: "Ben", 3: "Cy", 8: MEXICAN}))
SLOT = {"Ana": 1, "Ben": 2, "Cy": 3, MEXICAN: 8}


OPENED: list[Lights] = []


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    previous = Device.pin_factory
    Device.pin_factory = MockFactory()
    yield Device.pin_factory
    for lights in OPENED:  # closed here, so a failed test leaves no blink threads behind
        lights.close()
    OPENED.clear()
    Device.pin_factory.reset()
    Device.pin_factory = previous


def started(lights: Lights) -> Lights:
    OPENED.append(lights)
    lights.start()
    return lights


class Rig:
    """A table with its bus, store and lights, as the service wires them."""

    def __init__(self, factory: MockFactory, timing: Timing, players: tuple[str, ...] = ("Ana", "Ben", "Cy")) -> None:
        self.factory = factory
        self.bus = EventBus()
        self.table = Table(Store(":memory:"), self.bus)
        pins = PinsConfig(leds=MappingProxyType(dict(LED_PINS)), buzzer=BUZZER)
        self.lights = started(Lights(self.bus, pins, SEATS, timing))
        self.table.new_game("classic", list(players))
        self.settle()

    def pin(self, train: str) -> MockPin:
        return self.factory.pin(LED_PINS[SLOT[train]])

    @property
    def buzzer(self) -> MockPin:
        return self.factory.pin(BUZZER)

    def settle(self) -> None:
        assert self.lights.subscription is not None and self.lights.subscription.drain()

    def act(self, *actions: object) -> None:
        for action in actions:
            verdict = self.table.submit(action, source="test")  # type: ignore[arg-type]
            assert verdict.ok, verdict.error
        self.settle()

    def watch(self, seconds: float, *pins: MockPin) -> None:
        for p in pins:
            p.clear_states()
        time.sleep(seconds)


def changes(pin: MockPin) -> list[float]:
    """Seconds between successive changes after the first (the blink period halves)."""
    return [s.timestamp for s in pin.states[2:]]


def on_times(pin: MockPin) -> list[float]:
    """How long each complete high stretch lasted."""
    return [s.timestamp for s in pin.states[1:] if not s.state and s.timestamp > 0]


def test_start_up_chase_lights_each_slot_once_in_order_then_goes_dark(factory: MockFactory) -> None:
    pins = [factory.pin(p) for p in LED_PINS.values()]
    for p in pins:
        p.clear_states()
    started(Lights(EventBus(), PinsConfig(leds=MappingProxyType(dict(LED_PINS))), SEATS, Timing(chase_step=0.03)))
    lit_at = []
    for p in pins:
        assert [s.state for s in p.states] == [False, True, False]  # one flash, then dark
        assert 0.025 <= p.states[2].timestamp < 0.5
        lit_at.append(p.states[1].timestamp)
    assert lit_at == sorted(lit_at)  # slot 1 first, slot 8 last
    assert lit_at[-1] - lit_at[0] >= 7 * 0.025


def test_marker_lights_on_a_pass_and_clears_when_the_owner_plays_on_their_own_train(factory: MockFactory) -> None:
    rig = Rig(factory, Timing(chase_step=0))
    ben = rig.pin("Ben")
    rig.act(Start(12, "Ana"), Play("Ana", (12, 5), MEXICAN), Draw("Ben"))
    assert ben.state is False
    ben.clear_states()
    rig.act(Pass("Ben"))
    assert ben.state is True
    rig.act(Play("Cy", (12, 3), "Ben"))  # someone else on Ben's train: the marker stays
    rig.watch(0.4, ben)
    assert ben.state is True and len(ben.states) == 1  # steady: no blinking
    rig.act(Play("Ana", (12, 6), "Ana"), Play("Ben", (3, 7), "Ben"))
    assert ben.state is False
    assert [s.state for s in ben.states] == [True, False]
    for other in ("Ana", "Cy", MEXICAN):
        assert rig.pin(other).state is False


def test_an_open_double_blinks_until_it_is_covered(factory: MockFactory) -> None:
    rig = Rig(factory, Timing(chase_step=0))  # the real pattern: 0.5 s on, 0.5 s off
    mexican, ana = rig.pin(MEXICAN), rig.pin("Ana")
    rig.act(Start(12, "Ana"), Play("Ana", (12, 5), MEXICAN), Draw("Ben"), Pass("Ben"), Play("Cy", (12, 3), "Cy"))
    rig.act(Play("Ana", (5, 5), MEXICAN))
    rig.watch(1.25, mexican)
    steps = changes(mexican)
    assert len(steps) >= 1 and len(mexican.states) >= 3
    assert all(0.45 <= s <= 0.75 for s in steps), steps
    rig.act(Draw("Ana"), Pass("Ana"))  # Ana cannot cover it: her own marker is steady, the double still blinks
    rig.watch(0.6, mexican, ana)
    assert ana.state is True and len(ana.states) == 1
    assert len(mexican.states) >= 2
    rig.act(Play("Ben", (5, 8), MEXICAN))  # covered
    assert mexican.state is False
    rig.watch(0.7, mexican)
    assert len(mexican.states) == 1 and mexican.state is False
    assert ana.state is True  # the marker outlives the double


def test_an_illegal_play_buzzes_and_fast_blinks_its_train_until_taken_back(factory: MockFactory) -> None:
    rig = Rig(factory, Timing(chase_step=0))  # the real pattern: LED 0.1/0.1 s, buzzer 0.15 on / 0.85 off
    cy, buzzer = rig.pin("Cy"), rig.buzzer
    rig.act(Start(12, "Ana"), Play("Ana", (12, 5), MEXICAN))
    verdict = rig.table.submit(Play("Ben", (4, 9), "Cy"), source="camera")
    assert not verdict.ok and verdict.alert is not None and verdict.alert.train == "Cy"
    rig.settle()
    quiet = [rig.pin(t) for t in ("Ana", "Ben", MEXICAN)]
    rig.watch(1.05, cy, buzzer, *quiet)
    steps = changes(cy)
    assert len(steps) >= 6, steps
    assert all(0.07 <= s <= 0.3 for s in steps), steps
    beeps = on_times(buzzer)
    assert beeps and all(0.12 <= b <= 0.4 for b in beeps), buzzer.states
    for other in quiet:
        assert len(other.states) == 1 and other.state is False
    assert rig.table.clear_alert(verdict.alert.id, "taken-back")
    rig.settle()
    assert cy.state is False and buzzer.state is False
    rig.watch(0.4, cy, buzzer)
    assert len(cy.states) == 1 and len(buzzer.states) == 1  # all quiet again


def test_an_alert_outranks_a_marker_and_gives_it_back(factory: MockFactory) -> None:
    rig = Rig(factory, Timing(chase_step=0, alert=(0.02, 0.02), buzzer=(0.02, 0.02)))
    ben = rig.pin("Ben")
    rig.act(Start(12, "Ana"), Play("Ana", (12, 5), MEXICAN), Draw("Ben"), Pass("Ben"))
    verdict = rig.table.submit(Play("Cy", (4, 9), "Ben"), source="camera")
    assert verdict.alert is not None and verdict.alert.train == "Ben"
    rig.settle()
    rig.watch(0.2, ben)
    assert len(ben.states) >= 4
    rig.table.clear_alert(verdict.alert.id)
    rig.settle()
    rig.watch(0.2, ben)
    assert ben.state is True and len(ben.states) == 1


def test_undo_clears_the_alert_and_a_new_game_starts_dark(factory: MockFactory) -> None:
    rig = Rig(factory, Timing(chase_step=0, alert=(0.02, 0.02), buzzer=(0.02, 0.02)))
    rig.act(Start(12, "Ana"), Play("Ana", (12, 5), MEXICAN), Draw("Ben"), Pass("Ben"))
    rig.table.submit(Play("Cy", (4, 9), MEXICAN), source="camera")
    rig.settle()
    assert rig.table.undo(source="web") == Pass("Ben")
    rig.settle()
    rig.watch(0.15, rig.buzzer, rig.pin(MEXICAN), rig.pin("Ben"))
    for p in (rig.buzzer, rig.pin(MEXICAN), rig.pin("Ben")):
        assert p.state is False and len(p.states) == 1
    rig.act(Pass("Ben"))
    assert rig.pin("Ben").state is True
    rig.table.new_game("classic", ["Ana", "Ben", "Cy"])
    rig.settle()
    assert rig.pin("Ben").state is False


def test_without_a_calibration_slots_follow_the_seating_order() -> None:
    state = GameState(
        players=("Ana", "Ben"), preset="classic", set=12, phase="playing", round=12, engine=12, turn="Ana",
        trains={}, ends={}, markers=frozenset(), open_doubles=(), owes_follow_up=False, hand_counts=None,
        last_play=None, rounds=(), scores={}, leaders=(), game_over=False, went_out=None,
    )
    assert train_slots(state, CalibrationConfig()) == {"Ana": 1, "Ben": 2, MEXICAN: 3}
    assert train_slots(state, SEATS) == {"Ana": 1, "Ben": 2, MEXICAN: 8}


def test_leds_named_by_train_follow_that_train(factory: MockFactory) -> None:
    bus = EventBus()
    table = Table(Store(":memory:"), bus)
    pins = PinsConfig(leds=MappingProxyType({"Ben": 4, MEXICAN: 12}))
    lights = started(Lights(bus, pins, CalibrationConfig(), Timing(chase_step=0)))
    table.new_game("classic", ["Ana", "Ben"])
    for action in (Start(12, "Ana"), Play("Ana", (12, 5), "Ana"), Draw("Ben"), Pass("Ben")):
        table.submit(action, "test")
    assert lights.subscription is not None and lights.subscription.drain()
    assert factory.pin(4).state is True and factory.pin(12).state is False


# ------------------------------------------------------------ whole games
FAST = Timing(open_double=(0.05, 0.05), alert=(0.004, 0.004), buzzer=(0.004, 0.004), chase_step=0)
WINDOW = 0.08  # an open double changes at most twice in it; an alert about twenty times


def expected_modes(state: GameState, alert_train: str | None) -> dict[str, Mode]:
    """What each train's LED must show, worked out from the game state alone."""
    modes = dict.fromkeys(SLOT, Mode.DARK)
    if state.phase == "playing":
        for train in state.markers:
            modes[train] = Mode.MARKER
        for double in state.open_doubles:
            modes[double.train] = Mode.OPEN_DOUBLE
    if alert_train is not None:
        modes[alert_train] = Mode.ALERT
    return modes


def seen_mode(pin: MockPin) -> Mode:
    flips = len(pin.states) - 1
    if flips == 0:
        return Mode.MARKER if pin.state else Mode.DARK
    return Mode.ALERT if flips >= 4 else Mode.OPEN_DOUBLE


def test_a_whole_simulated_round_shows_exactly_the_game_on_the_leds(factory: MockFactory) -> None:
    rig = Rig(factory, FAST)
    sim = Simulator(preset("classic"), ["Ana", "Ben", "Cy"], random.Random(7), illegal_rate=0.08)
    pins = {train: rig.pin(train) for train in SLOT}
    seen: set[Mode] = set()
    shown: list[dict[str, Mode]] = [{}]
    watched = 0

    def check(alert_train: str | None, step: int) -> None:
        nonlocal watched
        state = rig.table.state()
        assert state is not None
        want = expected_modes(state, alert_train)
        seen.update(want.values())
        if want == shown[0]:  # nothing should have changed: steady LEDs must still read the same
            assert all(pins[t].state == (m == Mode.MARKER) for t, m in want.items() if m <= Mode.MARKER)
            return
        shown[0] = want
        watched += 1
        rig.watch(WINDOW, rig.buzzer, *pins.values())
        got = {train: seen_mode(pin) for train, pin in pins.items()}
        for train, mode in want.items():
            if mode == Mode.OPEN_DOUBLE and got[train] != mode:  # a busy machine may delay a slow blink
                rig.watch(2 * WINDOW, pins[train])
                got[train] = seen_mode(pins[train])
        assert got == want, f"step {step}: {sim.game.history[-1:]}"
        assert (len(rig.buzzer.states) > 1) == (alert_train is not None)

    for step, sim_step in enumerate(sim.round_steps()):
        if sim_step.illegal:
            verdict = rig.table.submit(sim_step.action, source="camera")
            assert verdict.alert is not None
            rig.settle()
            check(verdict.alert.train, step)
            rig.table.clear_alert(verdict.alert.id, "taken-back")
        else:
            rig.act(sim_step.action)
        rig.settle()
        check(None, step)
    assert {Mode.MARKER, Mode.OPEN_DOUBLE, Mode.ALERT} <= seen  # the round exercised every pattern
    assert watched >= 10
