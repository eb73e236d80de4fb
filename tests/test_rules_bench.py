"""``domino-hub bench rules`` runs and reports what it promises (its figures are read by people, not asserted)."""

from __future__ import annotations

import json

import pytest

from hub.cli import main
from scorekeeper import PRESETS


def test_bench_rules_reports_games_per_second_and_check_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "rules", "--seconds", "0.05", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["presets"]) == set(PRESETS)
    for figures in report["presets"].values():
        assert figures["games_per_s"] > 0 and figures["actions_per_s"] > 0 and figures["check_us"] > 0


def test_bench_rules_text_names_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "rules", "--seconds", "0.02"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("rules engine on ")
    assert [line.split()[0] for line in lines[1:]] == list(PRESETS)
    assert all("whole games/s" in line and "us per play check" in line for line in lines[1:])
