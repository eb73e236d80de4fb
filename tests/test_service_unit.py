"""The systemd unit: the settings the service relies on, and ``systemd-analyze verify`` where it exists."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parents[1] / "systemd" / "domino-hub.service"


def settings(text: str) -> dict[str, list[str]]:
    """``Key=value`` lines of a unit file (keys may repeat, as Environment= does)."""
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value.strip())
    return out


def test_the_unit_has_the_settings_the_service_relies_on() -> None:
    s = settings(UNIT.read_text())
    assert s["Type"] == ["notify"] and s["NotifyAccess"] == ["main"]
    assert int(s["WatchdogSec"][0]) >= 10
    assert s["Restart"] == ["on-failure"]
    assert s["User"] == ["domino-hub"]
    assert set(s["SupplementaryGroups"][0].split()) == {"video", "gpio"}
    assert s["StateDirectory"] == ["domino-hub"]  # /var/lib/domino-hub, the config's default database folder
    assert "GPIOZERO_PIN_FACTORY=lgpio" in s["Environment"]
    exec_start = s["ExecStart"][0].split()
    assert exec_start[1:] == ["run", "--config", "/etc/domino-hub/config.toml"]
    assert s["WantedBy"] == ["multi-user.target"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    # verify also checks that ExecStart's program exists; it lives in /opt only on a Pi, so the
    # copy checked here runs this interpreter instead and is otherwise the unit as shipped.
    text = UNIT.read_text()
    program = settings(text)["ExecStart"][0].split()[0]
    copy = tmp_path / UNIT.name
    copy.write_text(text.replace(f"ExecStart={program}", f"ExecStart={sys.executable} -m hub.cli"))
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(copy)], capture_output=True, text=True, timeout=60
    )
    complaints = [line for line in (done.stdout + done.stderr).splitlines() if UNIT.name in line]
    assert done.returncode == 0 and not complaints, done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_verify_would_catch_a_broken_unit(tmp_path: Path) -> None:
    """The check above can fail: a misspelt setting is reported against the unit."""
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace("Type=notify", "Type=notfy").replace(
        "ExecStart=/opt/domino-hub/.venv/bin/domino-hub", f"ExecStart={sys.executable}"))
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", str(copy)], capture_output=True, text=True)
    assert any(UNIT.name in line for line in (done.stdout + done.stderr).splitlines())
