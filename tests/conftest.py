"""Fixtures shared by several test files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked slow go first. pytest-xdist hands out the first tests to its workers in turn, so the
    few long ones (whole games, minutes each) then run side by side from the start, not one after another
    on one worker at the end. Otherwise the order is unchanged."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    """gpiozero's own mock pins for one test, and the previous pin factory back afterwards."""
    previous = Device.pin_factory
    Device.pin_factory = MockFactory()
    yield Device.pin_factory
    Device.pin_factory.reset()
    Device.pin_factory = previous
