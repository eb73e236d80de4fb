"""The table log (``shared/spec/table-log.md``): reading it, checking it, writing it.

Parsing is strict so a malformed log is reported by step and field instead of being
half-judged; a wrong *tile* is not malformed but a ``bad-tile`` verdict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .actions import Action, Blocked, Draw, Out, Pass, Play, Score, Start, action_to_json
from .errors import Code, IllegalPlay
from .game import Game, IncompleteScore
from .rules import Rules, RulesError, rules_from_spec

THEN_KEYS = (
    "turn", "markers", "open_doubles", "ends", "round_scores", "scores", "leaders", "round", "game_over",
)


class LogFormatError(ValueError):
    """The file is not a valid table log. ``where`` names the step and field at fault."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where


@dataclass(frozen=True)
class Expect:
    code: Code | None = None  # None: the action must be legal


@dataclass(frozen=True)
class Step:
    action: Action
    expect: Expect = Expect()
    then: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TableLog:
    rules: Rules
    players: tuple[str, ...]
    steps: tuple[Step, ...]
    rules_spec: Any = "classic"

    def to_json(self) -> dict:
        steps = []
        for s in self.steps:
            d = action_to_json(s.action)
            if s.expect.code is not None:
                d["expect"] = {"illegal": s.expect.code.value}
            if s.then:
                d["then"] = dict(s.then)
            steps.append(d)
        return {"rules": self.rules_spec, "players": list(self.players), "steps": steps}


@dataclass(frozen=True)
class StepResult:
    step: int
    action: Action
    error: IllegalPlay | None
    mismatch: tuple[str, ...]

    def to_json(self) -> dict:
        out: dict[str, Any] = {"step": self.step}
        if self.error is None:
            out["verdict"] = "ok"
        else:
            out.update(verdict="illegal", code=self.error.code.value, message=self.error.message)
        if self.mismatch:
            out["mismatch"] = list(self.mismatch)
        return out


# ------------------------------------------------------------------ parsing
def _need(obj: Mapping, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in obj:
        raise LogFormatError(f"{where}.{key}", "is missing")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise LogFormatError(f"{where}.{key}", f"must be {_kind_name(kind)}, not {type(value).__name__}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "a whole number", list: "a list", dict: "an object"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _parse_hand(value: Any, where: str) -> int | tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise LogFormatError(where, "a pip total cannot be negative")
        return value
    if isinstance(value, list):
        for i, t in enumerate(value):
            if not isinstance(t, list):
                raise LogFormatError(f"{where}[{i}]", "a tile must be a list [a, b]")
        return tuple(tuple(t) for t in value)
    raise LogFormatError(where, "must be a pip total or a list of tiles")


def parse_action(raw: Any, where: str) -> Action:
    if not isinstance(raw, dict):
        raise LogFormatError(where, "a step must be an object")
    act = _need(raw, "act", str, where)
    if act == "play":
        tile = raw.get("tile")
        if "tile" not in raw:
            raise LogFormatError(f"{where}.tile", "is missing")
        return Play(
            _need(raw, "player", str, where),
            tuple(tile) if isinstance(tile, list) else tile,
            _need(raw, "train", str, where),
        )
    if act in ("draw", "pass", "out"):
        player = _need(raw, "player", str, where)
        return {"draw": Draw, "pass": Pass, "out": Out}[act](player)
    if act == "blocked":
        return Blocked()
    if act == "start":
        engine = _need(raw, "engine", int, where)
        first = _need(raw, "first", str, where)
        hands = None
        if "hands" in raw:
            given = _need(raw, "hands", dict, where)
            hands = {}
            for p, h in given.items():
                if isinstance(h, list):
                    hands[p] = len(h)
                elif isinstance(h, int) and not isinstance(h, bool) and h >= 0:
                    hands[p] = h
                else:
                    raise LogFormatError(f"{where}.hands.{p}", "must be a tile count or a list of tiles")
        return Start(engine, first, hands)
    if act == "score":
        given = _need(raw, "hands", dict, where)
        return Score({p: _parse_hand(h, f"{where}.hands.{p}") for p, h in given.items()})
    raise LogFormatError(f"{where}.act", f"unknown act {act!r}")


def _parse_expect(raw: dict, where: str) -> Expect:
    if "expect" not in raw or raw["expect"] == "ok":
        return Expect()
    value = raw["expect"]
    if isinstance(value, dict) and set(value) == {"illegal"}:
        try:
            return Expect(Code(value["illegal"]))
        except ValueError:
            raise LogFormatError(f"{where}.expect.illegal", f"unknown verdict code {value['illegal']!r}") from None
    raise LogFormatError(f"{where}.expect", 'must be "ok" or {"illegal": CODE}')


def _parse_then(raw: dict, where: str) -> dict:
    if "then" not in raw:
        return {}
    then = raw["then"]
    if not isinstance(then, dict):
        raise LogFormatError(f"{where}.then", "must be an object")
    for key in then:
        if key not in THEN_KEYS:
            raise LogFormatError(f"{where}.then.{key}", "is not a state fact this log can check")
    return then


def parse(doc: Any) -> TableLog:
    """A typed table log from decoded JSON; LogFormatError names what is wrong."""
    if not isinstance(doc, dict):
        raise LogFormatError("log", "must be a JSON object with rules, players and steps")
    spec = doc.get("rules", "classic")
    players = _need(doc, "players", list, "log")
    if not all(isinstance(p, str) and p for p in players):
        raise LogFormatError("log.players", "every player must be a non-empty name")
    try:
        rules = rules_from_spec(spec)
        Game(rules, players)
    except RulesError as e:
        where = {"players": "log.players", "rules": "log.rules"}.get(e.key, f"log.rules.{e.key}")
        raise LogFormatError(where, str(e).removeprefix(f"{e.key}: ")) from None
    except ValueError as e:
        raise LogFormatError("log.players", str(e)) from None
    steps_raw = _need(doc, "steps", list, "log")
    steps = []
    for i, raw in enumerate(steps_raw):
        where = f"step {i}"
        action = parse_action(raw, where)
        steps.append(Step(action, _parse_expect(raw, where), _parse_then(raw, where)))
    return TableLog(rules, tuple(players), tuple(steps), spec)


def loads(text: str) -> TableLog:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise LogFormatError("file", f"not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise LogFormatError("file", "not valid JSON: nested too deeply") from None
    return parse(doc)


# ------------------------------------------------------------------ checking
def check(log: TableLog) -> list[StepResult]:
    """Judge every step; an illegal step changes nothing. IncompleteScore is a format error."""
    game = Game(log.rules, log.players)
    results = []
    for i, step in enumerate(log.steps):
        try:
            game.push(step.action)
            error = None
        except IllegalPlay as e:
            error = e
        except IncompleteScore as e:
            raise LogFormatError(f"step {i}.hands", str(e)) from None
        mismatch = _expect_mismatch(step.expect, error) + _then_mismatch(game, step.then)
        results.append(StepResult(i, step.action, error, tuple(mismatch)))
    return results


def _expect_mismatch(expect: Expect, error: IllegalPlay | None) -> list[str]:
    want = "ok" if expect.code is None else f"illegal {expect.code.value}"
    got = "ok" if error is None else f"illegal {error.code.value}"
    return [] if want == got else [f"expect: wanted {want}, got {got}"]


def _then_mismatch(game: Game, then: Mapping[str, Any]) -> list[str]:
    state = game.state()
    actual: dict[str, Any] = {
        "turn": state.turn,
        "markers": sorted(state.markers),
        "open_doubles": [[d.train, d.value] for d in state.open_doubles],
        "ends": dict(state.ends),
        "round_scores": dict(state.rounds[-1].scores) if state.rounds else {},
        "scores": dict(state.scores),
        "leaders": sorted(state.leaders),
        "round": state.round,
        "game_over": state.game_over,
    }
    out = []
    for key, want in then.items():
        have = actual[key]
        if key in ("markers", "leaders"):
            ok = isinstance(want, list) and sorted(map(str, want)) == have
        elif key in ("ends", "round_scores", "scores"):
            ok = isinstance(want, dict) and all(k in have and have[k] == v for k, v in want.items())
            if ok and key == "round_scores":
                ok = set(want) == set(have)
            if isinstance(want, dict) and key != "round_scores":  # round_scores must name every player
                have = {k: have.get(k) for k in want}
        else:
            ok = want == have
        if not ok:
            out.append(f"then.{key}: wanted {json.dumps(want)}, got {json.dumps(have)}")
    return out


def log_of(game: Game, rules_spec: Any) -> TableLog:
    """A table log of a game's accepted actions."""
    return TableLog(game.rules, game.players, tuple(Step(a) for a in game.history), rules_spec)


def describe(action: Action) -> str:
    """A short human reading of an action, for the text report."""
    if isinstance(action, Play):
        tile = action.tile
        shown = "|".join(map(str, tile)) if isinstance(tile, (tuple, list)) else repr(tile)
        return f"play {action.player} {shown} on {action.train}"
    if isinstance(action, Start):
        return f"start engine {action.engine}|{action.engine}, {action.first} first"
    if isinstance(action, Score):
        return "score " + ", ".join(action.hands)
    if isinstance(action, Blocked):
        return "blocked"
    return f"{action.act} {action.player}"

