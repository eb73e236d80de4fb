"""The device's one TOML config file, checked in full at start-up.

Every value is checked before anything starts, and each error names its key
(``camera.resolution: must be two positive whole numbers``), because a family at
the table cannot read a traceback. Unknown keys are errors too: a misspelt
setting that is silently ignored is worse than one that stops the service.

To add a setting: add a field to its section's dataclass and one line to that
section's ``_parse_*`` function; ``_Section`` does the checking and the naming.
"""

from __future__ import annotations

import re
import secrets
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from scorekeeper import MEXICAN, RulesError, rules_from_spec

SLOTS = 8
"""Train slots around the hub, numbered 1..8 clockwise (the calibration finds them)."""

CAMERA_SOURCES = ("picamera2", "opencv", "replay", "synthetic")
DEFAULT_PATH = Path("/etc/domino-hub/config.toml")
DEFAULT_DATABASE = Path("/var/lib/domino-hub/game.db")
PIN_FILE = "table-pin"

Pin = int | str
"""A GPIO pin as gpiozero names it: a BCM number (17) or a name ("GPIO17", "BOARD11")."""

_PIN_NAME = re.compile(r"^(GPIO|BCM)\d{1,2}$|^(BOARD|J8:)\d{1,2}$")
_TABLE_PIN = re.compile(r"^\d{4}$")
T = TypeVar("T")


class ConfigError(ValueError):
    """A setting that cannot be used; ``key`` is its dotted name in the file."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


# ----------------------------------------------------------------- sections
@dataclass(frozen=True)
class GameConfig:
    """The table's players in seating order, and the rules they play by."""

    players: tuple[str, ...] = ()
    preset: str = "classic"
    house_rules: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def rules_spec(self) -> str | dict[str, Any]:
        """The rules as a table log writes them (what ``Table.new_game`` takes)."""
        return {"preset": self.preset, **self.house_rules} if self.house_rules else self.preset


@dataclass(frozen=True)
class CameraConfig:
    source: str = "picamera2"
    device: int | None = None  # OpenCV camera index
    path: Path | None = None  # replay: a folder of frames or a video
    url: str | None = None  # OpenCV: a file or stream URL
    resolution: tuple[int, int] = (2028, 1520)  # still resolution, width x height
    fps: float = 10.0


@dataclass(frozen=True)
class CalibrationConfig:
    """Where the hub lies in the image and whose train each slot holds (written by the auto-calibration)."""

    centre: tuple[float, float] | None = None  # pixels
    radius: float | None = None  # pixels
    slot_angles: tuple[float, ...] = ()  # degrees, one per slot
    trains: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))  # slot -> train name

    def slot_of(self, train: str) -> int | None:
        for slot, name in self.trains.items():
            if name == train:
                return slot
        return None


@dataclass(frozen=True)
class PinsConfig:
    """GPIO pins. ``leds`` keys are slot numbers (1..8) or train names (a player, or "mexican")."""

    leds: Mapping[int | str, Pin] = field(default_factory=lambda: MappingProxyType({}))
    buzzer: Pin | None = None
    button: Pin | None = None
    active_high: bool = True  # LEDs and buzzer light on a high pin (wired pin -> resistor -> LED -> ground)


@dataclass(frozen=True)
class WebConfig:
    host: str = "0.0.0.0"
    port: int = 8000
    pin: str | None = None  # the table's 4-digit PIN; generated and kept in the state folder when absent


@dataclass(frozen=True)
class StorageConfig:
    database: Path = DEFAULT_DATABASE  # or ":memory:" for a demo that keeps nothing

    @property
    def state_dir(self) -> Path | None:
        """The folder for the service's own files, or None for an in-memory store."""
        return None if str(self.database) == ":memory:" else self.database.parent


@dataclass(frozen=True)
class TrackerConfig:
    stable_seconds: float = 0.5


@dataclass(frozen=True)
class Config:
    game: GameConfig = GameConfig()
    camera: CameraConfig = CameraConfig()
    calibration: CalibrationConfig = CalibrationConfig()
    pins: PinsConfig = PinsConfig()
    web: WebConfig = WebConfig()
    storage: StorageConfig = StorageConfig()
    tracker: TrackerConfig = TrackerConfig()
    source: str = "<defaults>"  # where it was read from, for messages


# -------------------------------------------------------------- the checker
class _Section:
    """One TOML table being read: typed getters that name the key, and a check for leftovers."""

    def __init__(self, data: Any, prefix: str) -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(prefix, "must be a table ([section] or {...})")
        self.prefix = prefix
        self._data = dict(data)
        self._known: list[str] = []

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def take(self, name: str) -> Any:
        """The raw value (None when absent), marking ``name`` as a known key."""
        self._known.append(name)
        return self._data.pop(name, None)

    def section(self, name: str) -> _Section:
        value = self.take(name)
        return _Section({} if value is None else value, self.key(name))

    def string(self, name: str, default: T, choices: tuple[str, ...] = ()) -> str | T:
        value = self.take(name)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(self.key(name), "must be a non-empty string")
        if choices and value not in choices:
            raise ConfigError(self.key(name), f"must be one of {', '.join(choices)}, not {value!r}")
        return value

    def integer(self, name: str, default: T, low: int, high: int) -> int | T:
        value = self.take(name)
        if value is None:
            return default
        if not _is_int(value) or not low <= value <= high:
            raise ConfigError(self.key(name), f"must be a whole number from {low} to {high}")
        return value

    def number(self, name: str, default: T, low: float, high: float) -> float | T:
        value = self.take(name)
        if value is None:
            return default
        if not _is_number(value) or not low <= value <= high:
            raise ConfigError(self.key(name), f"must be a number from {low:g} to {high:g}")
        return float(value)

    def boolean(self, name: str, default: bool) -> bool:
        value = self.take(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(self.key(name), "must be true or false")
        return value

    def numbers(self, name: str, count: int | None, check: Callable[[Any], bool], what: str) -> tuple | None:
        value = self.take(name)
        if value is None:
            return None
        if not isinstance(value, list) or (count is not None and len(value) != count) or not all(map(check, value)):
            raise ConfigError(self.key(name), f"must be {what}")
        return tuple(value)

    def finish(self) -> None:
        for name in self._data:
            known = ", ".join(self._known)
            raise ConfigError(self.key(name), f"is not a known setting (known here: {known})")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _parse_game(s: _Section) -> GameConfig:
    players = s.take("players")
    if players is None:
        players = []
    if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
        raise ConfigError(s.key("players"), "must be a list of names in seating order")
    for p in players:
        if players.count(p) > 1:
            raise ConfigError(s.key("players"), f"{p!r} is listed twice")
        if p == MEXICAN:
            raise ConfigError(s.key("players"), f"{MEXICAN!r} is the Mexican train's name, not a player's")
    preset = s.string("preset", "classic")
    rules = s.take("house_rules")
    if rules is None:
        rules = {}
    if not isinstance(rules, Mapping):
        raise ConfigError(s.key("house_rules"), "must be a table of rule options, e.g. close_doubles = \"reverse\"")
    try:
        checked = rules_from_spec({"preset": preset, **rules})
        if players:
            checked.check_players(len(players))
    except RulesError as e:
        key = "players" if e.key == "players" else "preset" if e.key == "preset" else f"house_rules.{e.key}"
        raise ConfigError(s.key(key), str(e).split(": ", 1)[1]) from None
    s.finish()
    return GameConfig(tuple(players), preset, MappingProxyType(dict(rules)))


def _parse_camera(s: _Section) -> CameraConfig:
    source = s.string("source", CameraConfig.source, CAMERA_SOURCES)
    device = s.integer("device", None, 0, 63)
    path = s.string("path", None)
    url = s.string("url", None)
    resolution = s.numbers("resolution", 2, lambda v: _is_int(v) and v > 0, "two positive whole numbers")
    fps = s.number("fps", CameraConfig.fps, 0.1, 120)
    s.finish()
    if source == "replay" and path is None:
        raise ConfigError(s.key("path"), "is needed for the replay source (a folder of frames or a video)")
    if source == "opencv" and device is not None and url is not None:
        raise ConfigError(s.key("url"), "give either camera.device or camera.url for OpenCV, not both")
    if source == "opencv" and url is None and device is None:
        device = 0
    return CameraConfig(
        source, device, None if path is None else Path(path), url,
        resolution or CameraConfig.resolution, fps,  # type: ignore[arg-type]
    )


def _parse_calibration(s: _Section, players: tuple[str, ...]) -> CalibrationConfig:
    centre = s.numbers("centre", 2, lambda v: _is_number(v) and v >= 0, "two pixel coordinates [x, y]")
    radius = s.number("radius", None, 1e-6, 1e5)
    angles = s.numbers("slot_angles", SLOTS, _is_number, f"{SLOTS} angles in degrees, one per slot")
    trains_section = s.section("trains")
    trains: dict[int, str] = {}
    for key, name in list(trains_section._data.items()):
        slot = _slot_number(key, trains_section.key(key))
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(trains_section.key(key), "must name a player's train or \"mexican\"")
        if name in trains.values():
            raise ConfigError(trains_section.key(key), f"{name!r} is already in another slot")
        if players and name not in players and name != MEXICAN:
            raise ConfigError(trains_section.key(key), f"{name!r} is not in game.players nor \"mexican\"")
        trains[slot] = name
        trains_section.take(key)
    s.finish()
    return CalibrationConfig(
        None if centre is None else (float(centre[0]), float(centre[1])),
        radius,
        () if angles is None else tuple(float(a) for a in angles),
        MappingProxyType(trains),
    )


def _slot_number(key: str, full_key: str) -> int:
    if not key.isdigit() or not 1 <= int(key) <= SLOTS:
        raise ConfigError(full_key, f"slots are numbered 1 to {SLOTS}")
    return int(key)


def _pin(value: Any, key: str) -> Pin:
    if _is_int(value) and 0 <= value <= 27:
        return value
    if isinstance(value, str) and _PIN_NAME.match(value):
        return value
    raise ConfigError(key, 'must be a BCM GPIO number from 0 to 27, or a name such as "GPIO17" or "BOARD11"')


def _parse_pins(s: _Section, players: tuple[str, ...]) -> PinsConfig:
    leds: dict[int | str, Pin] = {}
    raw = s.take("leds")
    if isinstance(raw, list):
        if len(raw) > SLOTS:
            raise ConfigError(s.key("leds"), f"the hub has {SLOTS} slots, not {len(raw)}")
        leds = {i + 1: _pin(v, f"{s.key('leds')}[{i}]") for i, v in enumerate(raw)}
    elif isinstance(raw, Mapping):
        for key, value in raw.items():
            full = f"{s.key('leds')}.{key}"
            if not key.isdigit() and players and key not in players and key != MEXICAN:
                raise ConfigError(full, f"{key!r} is neither a slot number, a player in game.players nor \"mexican\"")
            leds[_slot_number(key, full) if key.isdigit() else key] = _pin(value, full)
    elif raw is not None:
        raise ConfigError(s.key("leds"), "must list one pin per slot, or map slots or train names to pins")
    buzzer = s.take("buzzer")
    button = s.take("button")
    pins = PinsConfig(
        MappingProxyType(leds),
        None if buzzer is None else _pin(buzzer, s.key("buzzer")),
        None if button is None else _pin(button, s.key("button")),
        s.boolean("active_high", True),
    )
    s.finish()
    used: dict[str, str] = {}
    named = [(f"leds.{k}", v) for k, v in leds.items()] + [("buzzer", pins.buzzer), ("button", pins.button)]
    for name, pin in named:
        if pin is None:
            continue
        canonical = f"GPIO{pin}" if isinstance(pin, int) else str(pin).replace("BCM", "GPIO")
        if canonical in used:
            raise ConfigError(s.key(name), f"pin {pin} is already used by pins.{used[canonical]}")
        used[canonical] = name
    return pins


def _parse_web(s: _Section) -> WebConfig:
    host = s.string("host", WebConfig.host)
    port = s.integer("port", WebConfig.port, 0, 65535)
    pin = s.take("pin")
    if pin is not None and not (isinstance(pin, str) and _TABLE_PIN.match(pin)):
        raise ConfigError(s.key("pin"), 'must be four digits in quotes, e.g. "4821"')
    s.finish()
    return WebConfig(host, port, pin)


def _parse_storage(s: _Section) -> StorageConfig:
    database = s.string("database", str(DEFAULT_DATABASE))
    s.finish()
    if database != ":memory:" and not Path(database).is_absolute():
        raise ConfigError(s.key("database"), "must be an absolute path (the service's working folder may change)")
    return StorageConfig(Path(database))


def _parse_tracker(s: _Section) -> TrackerConfig:
    stable = s.number("stable_seconds", TrackerConfig.stable_seconds, 0.0, 10.0)
    s.finish()
    return TrackerConfig(stable)


# ------------------------------------------------------------------ loading
def parse_config(data: Mapping[str, Any], source: str = "<config>") -> Config:
    """A checked Config from parsed TOML; raises ConfigError naming the first key at fault."""
    top = _Section(data, "")
    game = _parse_game(top.section("game"))
    config = Config(
        game=game,
        camera=_parse_camera(top.section("camera")),
        calibration=_parse_calibration(top.section("calibration"), game.players),
        pins=_parse_pins(top.section("pins"), game.players),
        web=_parse_web(top.section("web")),
        storage=_parse_storage(top.section("storage")),
        tracker=_parse_tracker(top.section("tracker")),
        source=source,
    )
    for name in top._data:
        raise ConfigError(name, f"is not a known section (known: {', '.join(top._known)})")
    return config


def loads_config(text: str, source: str = "<config>") -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(source, f"is not valid TOML: {e}") from None
    return parse_config(data, source)


def load_config(path: str | Path) -> Config:
    """Read and check the config file; every problem is a ConfigError naming the file or the key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(str(path), f"cannot be read: {e}") from None
    return loads_config(text, str(path))


DEMO_CONFIG = """\
# The demo's table: a synthetic camera, mock pins and a store that keeps nothing.
[game]
players = ["Ana", "Ben", "Cy", "Dee"]
preset = "classic"

[camera]
source = "synthetic"

[calibration.trains]
1 = "Ana"
2 = "Ben"
3 = "Cy"
4 = "Dee"
8 = "mexican"

[pins]
leds = [17, 27, 22, 5, 6, 13, 19, 26]
buzzer = 18
button = 23

[web]
host = "127.0.0.1"
port = 8000

[storage]
database = ":memory:"
"""


def demo_config() -> Config:
    """The embedded config the demo runs with (pins as in the README's wiring table)."""
    return loads_config(DEMO_CONFIG, "<demo>")


def table_pin(config: Config) -> str:
    """The table's PIN: the configured one, else one generated once and kept in the state folder.

    A PIN kept on disk survives restarts, so the card printed by the hub stays right.
    An in-memory store (the demo) gets a fresh PIN each run.
    """
    if config.web.pin is not None:
        return config.web.pin
    state_dir = config.storage.state_dir
    if state_dir is None:
        return f"{secrets.randbelow(10_000):04d}"
    path = state_dir / PIN_FILE
    try:
        kept = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        kept = ""
    if _TABLE_PIN.match(kept):
        return kept
    pin = f"{secrets.randbelow(10_000):04d}"
    state_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(pin + "\n", encoding="ascii")
    tmp.replace(path)
    return pin
