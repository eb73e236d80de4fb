"""Request bodies into typed values, or a :class:`BadInput` that names the field at fault.

Everything is checked before anything is applied, so a bad request changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scorekeeper import (
    MEXICAN,
    Action,
    Blocked,
    Draw,
    Game,
    GameState,
    Out,
    Pass,
    Play,
    RulesError,
    Score,
    Start,
    rules_from_spec,
)

MAX_NAME = 24
MAX_PIPS = 10_000
RULE_OPTIONS = (
    "set", "min_players", "max_players", "hand_sizes", "engines", "first_player", "first_turn",
    "doubles", "close_doubles", "double_blank", "positive_scoring", "no_foreign_trains_first_turn",
)


class BadInput(ValueError):
    """Input that cannot be used; ``field`` names where it is wrong (``players[2]``, ``tile``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _obj(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadInput(field, "must be a JSON object")
    return value


def _only(body: Mapping[str, Any], allowed: Sequence[str], prefix: str = "") -> None:
    for key in body:
        if key not in allowed:
            raise BadInput(f"{prefix}{key or '(empty name)'}", "is not a known field")


def _int(value: Any, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(field, "must be a whole number")
    if not low <= value <= high:
        raise BadInput(field, f"must be between {low} and {high}")
    return value


def _name(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise BadInput(field, "must be a name (a string)")
    name = value.strip()
    if not name:
        raise BadInput(field, "must not be empty")
    if len(name) > MAX_NAME:
        raise BadInput(field, f"must be at most {MAX_NAME} characters")
    if any(not ch.isprintable() for ch in name):
        raise BadInput(field, "must not hold control characters")
    return name


def _need(body: Mapping[str, Any], key: str) -> Any:
    if key not in body:
        raise BadInput(key, "is missing")
    return body[key]


# ------------------------------------------------------------------ set-up
def parse_setup(body: Any) -> tuple[str | dict[str, Any], list[str]]:
    """``{"players": [...], "rules": "classic" | {"preset": ..., options}}`` into a rules spec and seats."""
    body = _obj(body, "body")
    _only(body, ("players", "rules"))
    raw_players = _need(body, "players")
    if not isinstance(raw_players, list) or not raw_players:
        raise BadInput("players", "must be a list of names in seating order")
    if len(raw_players) > 10:
        raise BadInput("players", "at most 10 players fit round a hub")
    players: list[str] = []
    for i, raw in enumerate(raw_players):
        name = _name(raw, f"players[{i}]")
        if name.casefold() == MEXICAN:
            raise BadInput(f"players[{i}]", f"{MEXICAN!r} is the shared train, not a player")
        if name.casefold() in (p.casefold() for p in players):
            raise BadInput(f"players[{i}]", f"{name} is already seated")
        players.append(name)
    spec = _rules_spec(body.get("rules", "classic"))
    try:
        rules = rules_from_spec(spec)
    except RulesError as e:
        raise BadInput("rules" if e.key == "rules" else f"rules.{e.key}", str(e).partition(": ")[2]) from None
    try:
        Game(rules, players)
    except RulesError as e:
        raise BadInput("players", str(e).partition(": ")[2]) from None
    except ValueError as e:
        raise BadInput("players", str(e).partition(": ")[2] or str(e)) from None
    return spec, players


def _rules_spec(raw: Any) -> str | dict[str, Any]:
    if isinstance(raw, str):
        return raw
    rules = _obj(raw, "rules")
    _only(rules, ("preset", *RULE_OPTIONS), "rules.")
    preset = rules.get("preset", "classic")
    if not isinstance(preset, str):
        raise BadInput("rules.preset", "must be a preset name")
    return {"preset": preset, **{k: v for k, v in rules.items() if k != "preset"}}


# ----------------------------------------------------------------- actions
ACT_FIELDS = {
    "play": ("act", "player", "tile", "train"),
    "draw": ("act", "player"),
    "pass": ("act", "player"),
    "out": ("act", "player"),
    "blocked": ("act",),
    "start": ("act", "engine", "first", "hands"),
    "score": ("act", "hands"),
}


def parse_action(body: Any, state: GameState) -> Action:
    """A table-log action from a phone, checked in form; the rules engine then judges it."""
    body = _obj(body, "body")
    act = _need(body, "act")
    if not isinstance(act, str) or act not in ACT_FIELDS:
        raise BadInput("act", f"must be one of: {', '.join(ACT_FIELDS)}")
    _only(body, ACT_FIELDS[act])
    if act == "play":
        return Play(_name(_need(body, "player"), "player"), _tile(_need(body, "tile"), "tile"),
                    _name(_need(body, "train"), "train"))
    if act in ("draw", "pass", "out"):
        player = _name(_need(body, "player"), "player")
        return {"draw": Draw, "pass": Pass, "out": Out}[act](player)
    if act == "blocked":
        return Blocked()
    if act == "start":
        engine = _int(_need(body, "engine"), "engine", 0, 18)
        first = _name(_need(body, "first"), "first")
        hands = None
        if body.get("hands") is not None:
            given = _obj(body["hands"], "hands")
            hands = {p: _int(given[p], f"hands.{p}", 0, 100) for p in given}
            _every_player(hands, state.players, "hands")
        return Start(engine, first, hands)
    given = _obj(_need(body, "hands"), "hands")
    hands: dict[str, Any] = {}
    for p, h in given.items():
        hands[p] = _hand(h, f"hands.{p}")
    _every_player(hands, [p for p in state.players if p != state.went_out], "hands")
    return Score(hands)


def _tile(value: Any, field: str) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise BadInput(field, "must be a tile: a list of two numbers, like [4, 9]")
    a, b = (_int(v, f"{field}[{i}]", 0, 99) for i, v in enumerate(value))
    return (a, b)


def _hand(value: Any, field: str) -> int | tuple[tuple[int, int], ...]:
    if isinstance(value, list):
        return tuple(_tile(t, f"{field}[{i}]") for i, t in enumerate(value))
    return _int(value, field, 0, MAX_PIPS)


def _every_player(given: Mapping[str, Any], players: Sequence[str], field: str) -> None:
    for p in players:
        if p not in given:
            raise BadInput(f"{field}.{p}", "is missing")


def parse_answer(body: Any) -> str:
    body = _obj(body, "body")
    _only(body, ("answer",))
    answer = _need(body, "answer")
    if not isinstance(answer, str) or not answer:
        raise BadInput("answer", "must be one of the question's choices")
    return answer
