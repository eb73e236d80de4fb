"""The one model every page reads: the game, alerts, camera status and open questions as JSON.

``GET /api/state``, the first message of every ``/events`` stream and each page's first paint
are all built here, so a phone never sees two versions of the same game.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hub.events import Alert, CameraStatus, HandCounts, Question
from scorekeeper import MEXICAN, PRESETS, Action, GameState, Play, RoundResult, Rules
from scorekeeper.actions import action_to_json
from scorekeeper.rules import CLOSE_DOUBLES, DOUBLES, FIRST_PLAYER, FIRST_TURN
from scorekeeper.tiles import SUPPORTED_SETS


def game_json(game_id: int, state: GameState, rules: Rules | None = None, ended: bool = False) -> dict[str, Any]:
    """A game state as the pages draw it: trains in seating order with the Mexican train last."""
    open_by_train = {d.train: d.value for d in state.open_doubles}
    trains = []
    for name in (*state.players, MEXICAN):
        tiles = state.trains.get(name, ())
        trains.append({
            "name": name,
            "owner": None if name == MEXICAN else name,
            "tiles": [[t.inner, t.outer] for t in tiles],
            "end": state.ends.get(name),
            "marker": name in state.markers,
            "open_double": open_by_train.get(name),
        })
    last = state.last_play
    return {
        "id": game_id,
        "ended": ended,
        "rules": None if rules is None else rules.to_dict(),
        "players": list(state.players),
        "preset": state.preset,
        "set": state.set,
        "phase": state.phase,
        "round": state.round,
        "engine": state.engine,
        "turn": state.turn,
        "trains": trains,
        "ends": dict(state.ends),
        "markers": sorted(state.markers, key=_seat_order(state)),
        "open_doubles": [{"train": d.train, "value": d.value} for d in state.open_doubles],
        "owes_follow_up": state.owes_follow_up,
        "hand_counts": None if state.hand_counts is None else dict(state.hand_counts),
        "last_play": None if last is None else {
            "player": last.player, "train": last.train, "tile": [last.tile.low, last.tile.high],
        },
        "rounds": [round_json(r) for r in state.rounds],
        "scores": dict(state.scores),
        "leaders": list(state.leaders),
        "game_over": state.game_over,
        "went_out": state.went_out,
    }


def _seat_order(state: GameState) -> Any:
    seats = {p: i for i, p in enumerate((*state.players, MEXICAN))}
    return lambda name: seats.get(name, len(seats))


def round_json(result: RoundResult) -> dict[str, Any]:
    return {"engine": result.engine, "scores": dict(result.scores), "went_out": result.went_out}


def action_json(action: Action) -> dict[str, Any]:
    return action_to_json(action)


def alert_json(alert: Alert, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An alert with what a translated message needs: the player, the tile and the train."""
    tile = list(alert.action.tile) if isinstance(alert.action, Play) else None
    return {
        "id": alert.id,
        "player": alert.player,
        "code": alert.code,
        "message": alert.message,
        "text": alert.text,
        "tile": tile,
        "train": alert.train if alert.train is not None else _train_of(alert.action),
        "action": action_json(alert.action),
        "params": dict(params or {}),
    }


def _train_of(action: Action) -> str | None:
    return action.train if isinstance(action, Play) and isinstance(action.train, str) else None


def alert_params(alert: Alert, before: GameState | None) -> dict[str, Any]:
    """Facts of the board the illegal action was judged against, for the translated reason.

    An illegal action changes nothing, so ``before`` (the last state published ahead of the
    alert) is exactly the board the engine looked at.
    """
    if before is None:
        return {}
    params: dict[str, Any] = {}
    train = _train_of(alert.action)
    if train is not None and train in before.ends:
        params["end"] = before.ends[train]
    if before.turn is not None:
        params["turn"] = before.turn
    if before.open_doubles:
        due = before.open_doubles[0]
        params["double"] = due.value
        params["double_train"] = due.train
    return params


def camera_json(status: CameraStatus) -> dict[str, Any]:
    return {"status": status.status, "detail": status.detail}


def question_json(question: Question) -> dict[str, Any]:
    return {"id": question.id, "text": question.text, "choices": list(question.choices), "typed": question.typed}


def counted_json(counts: HandCounts | None) -> dict[str, Any] | None:
    if counts is None:
        return None
    return {"counts": {k: int(v) for k, v in counts.counts.items()},
            "tiles": {k: int(v) for k, v in counts.tiles.items()}}


def questions_json(questions: Iterable[Question]) -> list[dict[str, Any]]:
    return [question_json(q) for q in sorted(questions, key=lambda q: q.id)]


def presets_json() -> dict[str, Any]:
    """Every preset's options and the values each choice may take: what the set-up form offers."""
    return {
        "presets": {name: rules.to_dict() for name, rules in PRESETS.items()},
        "choices": {
            "set": list(SUPPORTED_SETS),
            "first_player": list(FIRST_PLAYER),
            "first_turn": list(FIRST_TURN),
            "doubles": list(DOUBLES),
            "close_doubles": list(CLOSE_DOUBLES),
        },
    }
