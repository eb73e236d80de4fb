"""The table log's state checks (``then``) and step reports, through scorekeeper.tablelog."""

from __future__ import annotations

from typing import Any

import pytest

from scorekeeper import Code, Play, tablelog

STEPS: list[dict[str, Any]] = [
    {"act": "start", "engine": 12, "first": "Ana"},
    {"act": "play", "player": "Ana", "tile": [12, 5], "train": "Ana"},
    {"act": "draw", "player": "Ben"},
    {"act": "pass", "player": "Ben"},
]


def mismatches(then: dict[str, Any], steps: list[dict[str, Any]] = STEPS) -> list[str]:
    doc = {"rules": "classic", "players": ["Ana", "Ben"], "steps": [*steps[:-1], {**steps[-1], "then": then}]}
    return list(tablelog.check(tablelog.parse(doc))[-1].mismatch)


@pytest.mark.parametrize(
    "then",
    [
        {"markers": ["Ben"], "turn": "Ana", "round": 12, "game_over": False, "open_doubles": []},
        {"ends": {"Ana": 5}},  # ends: only the trains named are compared
        {"ends": {"Ben": 12, "mexican": 12}},
        {"scores": {"Ana": 0}, "leaders": ["Ben", "Ana"]},  # leaders and markers in any order
    ],
)
def test_facts_that_hold(then: dict[str, Any]) -> None:
    assert mismatches(then) == []


@pytest.mark.parametrize(
    ("then", "message"),
    [
        ({"markers": []}, 'then.markers: wanted [], got ["Ben"]'),
        ({"turn": None}, 'then.turn: wanted null, got "Ana"'),
        ({"ends": {"Ana": 12}}, 'then.ends: wanted {"Ana": 12}, got {"Ana": 5}'),
        ({"ends": {"Cy": 12}}, 'then.ends: wanted {"Cy": 12}, got {"Cy": null}'),
        ({"open_doubles": [["Ana", 5]]}, 'then.open_doubles: wanted [["Ana", 5]], got []'),
        ({"round": 11}, "then.round: wanted 11, got 12"),
        ({"game_over": True}, "then.game_over: wanted true, got false"),
    ],
)
def test_facts_that_do_not_hold_are_named(then: dict[str, Any], message: str) -> None:
    assert mismatches(then) == [message]


def test_round_scores_must_name_every_player() -> None:
    steps = [*STEPS[:2], {"act": "out", "player": "Ana"}, {"act": "score", "hands": {"Ben": [[0, 0]]}}]
    assert mismatches({"round_scores": {"Ana": 0, "Ben": 50}}, steps) == []
    assert mismatches({"round_scores": {"Ben": 50}}, steps) == [
        'then.round_scores: wanted {"Ben": 50}, got {"Ana": 0, "Ben": 50}'
    ]
    assert mismatches({"scores": {"Ben": 50}, "leaders": ["Ana"], "round": 11}, steps) == []


def test_an_illegal_step_is_reported_with_code_and_message_and_changes_nothing() -> None:
    doc = {"rules": "classic", "players": ["Ana", "Ben"], "steps": [
        STEPS[0],
        {"act": "play", "player": "Ana", "tile": [5, 6], "train": "Ana", "expect": {"illegal": "no-match"},
         "then": {"turn": "Ana", "ends": {"Ana": 12}}},
        {**STEPS[1], "expect": "ok"},
    ]}
    results = tablelog.check(tablelog.parse(doc))
    assert [r.to_json() for r in results] == [
        {"step": 0, "verdict": "ok"},
        {"step": 1, "verdict": "illegal", "code": "no-match",
         "message": "5|6 does not match Ana's train, which ends in 12"},
        {"step": 2, "verdict": "ok"},
    ]
    assert results[1].error is not None and results[1].error.code == Code.NO_MATCH
    assert tablelog.describe(results[1].action) == "play Ana 5|6 on Ana"
    assert isinstance(results[2].action, Play)
