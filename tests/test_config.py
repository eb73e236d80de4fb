"""The device config: every value checked at start-up, every error naming its key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hub.config import (
    DEFAULT_DATABASE,
    Config,
    ConfigError,
    demo_config,
    load_config,
    loads_config,
    table_pin,
)
from scorekeeper import rules_from_spec

ROOT = Path(__file__).resolve().parents[1]

FULL = """
[game]
players = ["Ana", "Ben", "Cy"]
preset = "dominos-cc"
[game.house_rules]
close_doubles = "reverse"
double_blank = 25

[camera]
source = "opencv"
url = "rtsp://10.0.0.2/table"
resolution = [1920, 1080]
fps = 5

[calibration]
centre = [960.5, 540]
radius = 120
slot_angles = [0, 45, 90, 135, 180, 225, 270, 315]
[calibration.trains]
1 = "Ana"
3 = "Ben"
5 = "Cy"
8 = "mexican"

[pins]
buzzer = "GPIO18"
button = 23
active_high = false
[pins.leds]
1 = 17
Ben = 27
mexican = "BOARD15"

[web]
host = "127.0.0.1"
port = 8080
pin = "0042"

[storage]
database = "/srv/games/table.db"

[tracker]
stable_seconds = 0.8
"""


def test_a_full_config_reads_into_typed_values() -> None:
    c = loads_config(FULL)
    assert c.game.players == ("Ana", "Ben", "Cy")
    assert c.game.rules_spec == {"preset": "dominos-cc", "close_doubles": "reverse", "double_blank": 25}
    assert rules_from_spec(c.game.rules_spec).close_doubles == "reverse"
    assert (c.camera.source, c.camera.url, c.camera.device) == ("opencv", "rtsp://10.0.0.2/table", None)
    assert (c.camera.resolution, c.camera.fps) == ((1920, 1080), 5.0)
    assert c.calibration.centre == (960.5, 540.0) and c.calibration.radius == 120.0
    assert len(c.calibration.slot_angles) == 8
    assert dict(c.calibration.trains) == {1: "Ana", 3: "Ben", 5: "Cy", 8: "mexican"}
    assert c.calibration.slot_of("Cy") == 5 and c.calibration.slot_of("Dee") is None
    assert dict(c.pins.leds) == {1: 17, "Ben": 27, "mexican": "BOARD15"}
    assert (c.pins.buzzer, c.pins.button, c.pins.active_high) == ("GPIO18", 23, False)
    assert (c.web.host, c.web.port, c.web.pin) == ("127.0.0.1", 8080, "0042")
    assert c.storage.database == Path("/srv/games/table.db")
    assert c.storage.state_dir == Path("/srv/games")
    assert c.tracker.stable_seconds == 0.8


def test_an_empty_file_gives_the_documented_defaults() -> None:
    c = loads_config("")
    assert c.camera.source == "picamera2" and c.camera.resolution == (2028, 1520)
    assert c.web.port == 8000 and c.web.pin is None
    assert c.storage.database == DEFAULT_DATABASE == Path("/var/lib/domino-hub/game.db")
    assert c.tracker.stable_seconds == 0.5
    assert c.game.players == () and c.game.rules_spec == "classic"
    assert dict(c.pins.leds) == {} and c.pins.button is None


def test_values_are_frozen() -> None:
    c = loads_config(FULL)
    with pytest.raises(AttributeError):
        c.web.port = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.pins.leds[2] = 5  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("[camera]\nresolution = [2028, 0]", "camera.resolution", "must be two positive whole numbers"),
        ("[camera]\nresolution = [2028]", "camera.resolution", "must be two positive whole numbers"),
        ("[camera]\nresoluton = [1, 2]", "camera.resoluton", "is not a known setting"),
        ("[camera]\nsource = 'webcam'", "camera.source", "picamera2, opencv, replay, synthetic"),
        ("[camera]\nsource = 'replay'", "camera.path", "is needed for the replay source"),
        ("[camera]\nsource = 'opencv'\ndevice = 0\nurl = 'x'", "camera.url", "not both"),
        ("[camera]\nfps = 0", "camera.fps", "must be a number"),
        ("[camera]\nfps = true", "camera.fps", "must be a number"),
        ("[cameras]\nsource = 'opencv'", "cameras", "is not a known section"),
        ("camera = 3", "camera", "must be a table"),
        ("[game]\nplayers = ['Ana']", "game.players", "2-8 players, not 1"),
        ("[game]\nplayers = ['Ana', 'Ana']", "game.players", "listed twice"),
        ("[game]\nplayers = ['Ana', 'mexican']", "game.players", "Mexican train's name"),
        ("[game]\nplayers = 'Ana, Ben'", "game.players", "list of names"),
        ("[game]\npreset = 'poker'", "game.preset", "unknown preset"),
        ("[game.house_rules]\nclose_doubles = 'sideways'", "game.house_rules.close_doubles", "order, reverse"),
        ("[game.house_rules]\nfree_parking = true", "game.house_rules.free_parking", "not a rule option"),
        ("[game]\nhouse_rules = 3", "game.house_rules", "table of rule options"),
        ("[calibration]\nslot_angles = [0, 90]", "calibration.slot_angles", "8 angles"),
        ("[calibration]\ncentre = [1, -2]", "calibration.centre", "two pixel coordinates"),
        ("[calibration.trains]\n9 = 'Ana'", "calibration.trains.9", "numbered 1 to 8"),
        ("[calibration.trains]\n1 = 'Ana'\n2 = 'Ana'", "calibration.trains.2", "already in another slot"),
        ("[game]\nplayers=['Ana','Ben']\n[calibration.trains]\n1 = 'Zed'", "calibration.trains.1", "'Zed'"),
        ("[pins]\nbuzzer = 40", "pins.buzzer", "BCM GPIO number from 0 to 27"),
        ("[pins]\nbutton = 'pin 7'", "pins.button", "BCM GPIO number"),
        ("[pins]\nleds = [17, 17]", "pins.leds.2", "already used by pins.leds.1"),
        ("[pins]\nleds = [17]\nbutton = 'GPIO17'", "pins.button", "already used by pins.leds.1"),
        ("[pins]\nleds = [1, 2, 3, 4, 5, 6, 7, 8, 9]", "pins.leds", "8 slots, not 9"),
        ("[pins.leds]\n0 = 17", "pins.leds.0", "numbered 1 to 8"),
        ("[game]\nplayers=['Ana','Ben']\n[pins.leds]\nZed = 17", "pins.leds.Zed", "neither a slot number"),
        ("[pins]\nleds = 17", "pins.leds", "one pin per slot"),
        ("[pins]\nactive_high = 'yes'", "pins.active_high", "true or false"),
        ("[web]\nport = 70000", "web.port", "from 0 to 65535"),
        ("[web]\npin = 1234", "web.pin", "four digits in quotes"),
        ("[web]\npin = '12345'", "web.pin", "four digits"),
        ("[storage]\ndatabase = 'game.db'", "storage.database", "absolute path"),
        ("[tracker]\nstable_seconds = -1", "tracker.stable_seconds", "from 0 to 10"),
        ("[tracker]\nstable = 1", "tracker.stable", "known here: stable_seconds"),
    ],
)
def test_each_error_names_its_key(text: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        loads_config(text)
    assert caught.value.key == key
    assert str(caught.value).startswith(f"{key}: ")
    assert words in caught.value.message


def test_bad_toml_and_unreadable_files_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "config.toml"
    bad.write_text("[camera\nsource = 1\n")
    with pytest.raises(ConfigError, match=r"config.toml: is not valid TOML") as caught:
        load_config(bad)
    assert caught.value.key == str(bad)
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(tmp_path / "missing.toml")


def test_load_config_reads_a_file_and_remembers_where_from(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(FULL)
    c = load_config(path)
    assert c.source == str(path) and c.game.players == ("Ana", "Ben", "Cy")


def test_opencv_without_device_or_url_means_the_first_camera() -> None:
    assert loads_config("[camera]\nsource = 'opencv'").camera.device == 0


def test_the_demo_config_is_valid_and_keeps_nothing_on_disk() -> None:
    c = demo_config()
    assert isinstance(c, Config)
    assert c.camera.source == "synthetic" and c.storage.state_dir is None
    assert len(c.pins.leds) == 8 and c.calibration.slot_of("mexican") == 8


def _toml_blocks(markdown: Path) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", markdown.read_text(encoding="utf-8"), flags=re.S)


def test_the_install_guides_example_configs_are_valid() -> None:
    blocks = _toml_blocks(ROOT / "systemd" / "INSTALL.md")
    assert len(blocks) == 2
    main = loads_config(blocks[0])
    assert main.pins.leds[1] == 17 and main.pins.leds[8] == 26 and main.pins.button == 23
    loads_config("[game]\nplayers = ['Ana', 'Ben', 'Cy', 'Dee']\n" + blocks[1])


def test_a_configured_pin_is_used_as_it_is(tmp_path: Path) -> None:
    c = loads_config(f"[web]\npin = '4821'\n[storage]\ndatabase = '{tmp_path}/game.db'")
    assert table_pin(c) == "4821"
    assert not (tmp_path / "table-pin").exists()


def test_a_missing_pin_is_made_once_and_kept(tmp_path: Path) -> None:
    c = loads_config(f"[storage]\ndatabase = '{tmp_path}/state/game.db'")
    first = table_pin(c)
    assert re.fullmatch(r"\d{4}", first)
    assert (tmp_path / "state" / "table-pin").read_text().strip() == first
    assert table_pin(c) == first  # a restart shows the same PIN as the printed card


def test_an_in_memory_store_gets_a_pin_without_writing() -> None:
    assert re.fullmatch(r"\d{4}", table_pin(demo_config()))


def _wiring(markdown: Path) -> dict[str, tuple[int, str]]:
    """Rows of a wiring table: part -> (GPIO, resistor column)."""
    rows = re.findall(r"^\| (LED, slot \d|buzzer|button)[^|]* \| (\d+) \| \d+ \| ([^|]+) \|", markdown.read_text(),
                      flags=re.M)
    return {part: (int(gpio), resistor.strip()) for part, gpio, resistor in rows}


def test_the_wiring_tables_match_the_example_config() -> None:
    readme = ROOT / "README.md"
    hardware = readme.read_text(encoding="utf-8").split("## Hardware", 1)[1]
    pins = loads_config(re.findall(r"```toml\n(.*?)```", hardware, flags=re.S)[0]).pins
    for table in (readme, ROOT / "systemd" / "INSTALL.md"):
        wiring = _wiring(table)
        assert {wiring[f"LED, slot {slot}"][0] for slot in range(1, 9)} == set(pins.leds.values())
        for slot, pin in pins.leds.items():
            gpio, resistor = wiring[f"LED, slot {slot}"]
            assert gpio == pin and resistor == "330 Ω", table
        assert wiring["buzzer"][0] == pins.buzzer and wiring["button"][0] == pins.button
