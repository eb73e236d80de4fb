"""Every shared scenario (../shared/spec/scenarios) must pass ``domino-hub rules check --json``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parents[2] / "shared" / "spec" / "scenarios"
CONSOLE_SCRIPT = Path(sys.executable).with_name("domino-hub")


def scenario_files() -> list[Path]:
    """The shared scenarios; a missing folder is a failure, never a skip (CI clones shared/ beside the repo)."""
    if not SCENARIOS.is_dir():
        pytest.fail(f"the shared scenarios are missing: {SCENARIOS} does not exist", pytrace=False)
    files = sorted(SCENARIOS.glob("*.json"))
    if not files:
        pytest.fail(f"no scenarios in {SCENARIOS}", pytrace=False)
    return files


def test_scenarios_folder_is_there() -> None:
    assert len(scenario_files()) >= 4


def test_every_scenario_passes() -> None:
    failures = []
    for path in scenario_files():
        proc = subprocess.run(
            [str(CONSOLE_SCRIPT), "rules", "check", str(path), "--json"], capture_output=True, text=True, timeout=60
        )
        steps = len(json.loads(path.read_text(encoding="utf-8"))["steps"])
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        if proc.returncode != 0 or [line["step"] for line in lines] != list(range(steps)):
            failures.append(f"{path.name}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}")
    assert not failures, "\n".join(failures)
