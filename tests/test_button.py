"""The hub's button, pressed and held through gpiozero's mock pins, acting on the real Table."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from types import MappingProxyType

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPin

from hub.bus import EventBus
from hub.button import TableButton, make_button
from hub.config import CalibrationConfig, PinsConfig
from hub.events import ActionApplied, ActionUndone, IllegalAction
from hub.lights import Lights, Timing
from hub.table import Table
from scorekeeper import MEXICAN, Draw, Pass, Play, Start, preset
from scorekeeper.simulate import Simulator
from scorekeeper.store import Store

BUTTON = 23
BEN_LED = 27
BUZZER = 18


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    previous = Device.pin_factory
    Device.pin_factory = MockFactory()
    yield Device.pin_factory
    for hub in Hub.opened:  # closed here too, so a failed test leaves no threads driving pins
        hub.close()
    Hub.opened.clear()
    Device.pin_factory.reset()
    Device.pin_factory = previous


class Hub:
    """A table, its lights and its button on mock pins; ``events`` records what the bus carried."""

    opened: list[Hub] = []

    def __init__(self, factory: MockFactory, hold: float = 2.0, held_at_start: bool = False) -> None:
        self.bus = EventBus()
        self.table = Table(Store(":memory:"), self.bus)
        self.events: list[object] = []
        self.recorder = self.bus.subscribe(lambda env: self.events.append(env.event), "recorder")
        leds = MappingProxyType({1: 17, 2: BEN_LED, 3: 22})
        self.lights = Lights(self.bus, PinsConfig(leds=leds, buzzer=BUZZER), CalibrationConfig(), Timing(chase_step=0))
        self.lights.start()
        self.refused: list[str] = []
        button = make_button(BUTTON, hold_seconds=hold)
        self.pin: MockPin = factory.pin(BUTTON)
        if held_at_start:
            self.pin.drive_low()
        self.button = TableButton(self.table, button, on_refused=self._refused)
        self.factory = factory
        Hub.opened.append(self)

    def _refused(self, reason: str) -> None:
        self.refused.append(reason)
        self.lights.beep_refused()

    def settle(self) -> None:
        assert self.lights.subscription is not None and self.lights.subscription.drain()
        assert self.recorder.drain()

    def press(self, seconds: float = 0.1) -> None:
        self.pin.drive_low()
        time.sleep(seconds)
        self.pin.drive_high()
        self.settle()

    def applied(self) -> list[object]:
        return [e.action for e in self.events if isinstance(e, ActionApplied) and e.source == "button"]

    def close(self) -> None:
        self.button.close()
        self.lights.close()
        self.recorder.close()


def start_round(hub: Hub) -> None:
    hub.table.new_game("classic", ["Ana", "Ben", "Cy"])
    for action in (Start(12, "Ana"), Play("Ana", (12, 5), MEXICAN), Draw("Ben")):
        assert hub.table.submit(action, source="test").ok
    hub.settle()


def test_a_press_passes_for_the_player_whose_turn_it_is_and_lights_their_marker(factory: MockFactory) -> None:
    hub = Hub(factory)
    start_round(hub)
    led = factory.pin(BEN_LED)
    assert led.state is False
    hub.press()
    assert hub.applied() == [Pass("Ben")]
    state = hub.table.state()
    assert state is not None and state.markers == {"Ben"} and state.turn == "Cy"
    assert led.state is True
    assert hub.table.store.load(hub.table.game_id).actions[-1] == Pass("Ben")  # stored, survives a restart


def test_a_bouncing_contact_passes_exactly_once(factory: MockFactory) -> None:
    hub = Hub(factory)
    start_round(hub)
    for _ in range(4):  # contact bounce as the button goes down
        hub.pin.drive_low()
        hub.pin.drive_high()
    hub.pin.drive_low()
    time.sleep(0.12)
    for _ in range(3):  # and as it comes up
        hub.pin.drive_high()
        hub.pin.drive_low()
    hub.pin.drive_high()
    hub.settle()
    assert hub.applied() == [Pass("Ben")]  # not a second pass for Cy


def test_a_glitch_shorter_than_the_debounce_time_is_no_press(factory: MockFactory) -> None:
    hub = Hub(factory)
    start_round(hub)
    hub.press(seconds=0.005)
    assert hub.applied() == [] and hub.refused == []


def test_a_two_second_hold_undoes_the_last_action_once(factory: MockFactory) -> None:
    hub = Hub(factory)  # the real hold time: 2 s
    start_round(hub)
    hub.press()
    assert factory.pin(BEN_LED).state is True
    hub.pin.drive_low()
    time.sleep(1.7)
    hub.settle()
    assert not [e for e in hub.events if isinstance(e, ActionUndone)]  # not yet
    time.sleep(0.8)
    hub.settle()
    undone = [e for e in hub.events if isinstance(e, ActionUndone)]
    assert [(e.action, e.source) for e in undone] == [(Pass("Ben"), "button")]
    hub.pin.drive_high()  # letting go after a hold is not a press
    hub.settle()
    assert hub.applied() == [Pass("Ben")]
    state = hub.table.state()
    assert state is not None and state.turn == "Ben" and state.markers == frozenset()
    assert factory.pin(BEN_LED).state is False


def test_a_button_held_at_start_up_does_not_fire_until_let_go(factory: MockFactory) -> None:
    hub = Hub(factory, hold=0.3, held_at_start=True)
    start_round(hub)
    time.sleep(0.5)  # longer than a hold: still nothing
    hub.pin.drive_high()
    hub.settle()
    assert hub.applied() == [] and not [e for e in hub.events if isinstance(e, ActionUndone)]
    assert hub.refused == []
    hub.press()  # after the first release it works
    assert hub.applied() == [Pass("Ben")]


def test_a_refused_press_beeps_once_and_raises_no_alert(factory: MockFactory) -> None:
    hub = Hub(factory, hold=0.3)
    buzzer = factory.pin(BUZZER)
    buzzer.clear_states()
    hub.press()  # no game yet
    time.sleep(0.5)  # let the first beep end
    hub.pin.drive_low()
    time.sleep(0.4)  # a hold with nothing to undo
    hub.pin.drive_high()
    time.sleep(0.7)
    hub.settle()
    assert len(hub.refused) == 2
    assert [s.state for s in buzzer.states] == [False, True, False, True, False]
    assert all(0.25 <= s.timestamp <= 0.6 for s in buzzer.states[2::2])  # two single 0.3 s beeps
    assert not [e for e in hub.events if isinstance(e, IllegalAction)]


def test_a_whole_round_can_be_passed_by_button(factory: MockFactory) -> None:
    """Every pass of a simulated round comes from the button; the round ends just as the simulation's."""
    hub = Hub(factory, hold=5.0)
    hub.table.new_game("classic", ["Ana", "Ben", "Cy"])
    sim = Simulator(preset("classic"), ["Ana", "Ben", "Cy"], random.Random(3))
    passes = 0
    for step in sim.round_steps():
        if isinstance(step.action, Pass):
            state = hub.table.state()
            assert state is not None and state.turn == step.action.player
            hub.press(seconds=0.06)
            passes += 1
        else:
            assert hub.table.submit(step.action, source="test").ok
    assert passes >= 3 and hub.applied() == [a for a in sim.game.history if isinstance(a, Pass)]
    final = hub.table.state()
    assert final is not None and final.scores == sim.game.state().scores
