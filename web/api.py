"""The JSON API and the ``/events`` stream. Reading is free; every change passes the PIN guard."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import Blueprint, Response, jsonify, request

from hub.events import HandCounts
from hub.table import NoGame, Verdict
from scorekeeper import Action, IncompleteScore, Play, Score, Start

from .app import ctx, error
from .live import BadAnswer, QuestionGone, StreamsFull
from .model import action_json, alert_json, alert_params, presets_json
from .validate import BadInput, parse_action, parse_answer, parse_setup

bp = Blueprint("api", __name__)


def changes(view: Callable[..., Response]) -> Callable[..., Response]:
    """A view that changes the game: same-site, with the table PIN."""

    @wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Response:
        ctx().guard.check(request)
        return view(*args, **kwargs)

    return guarded


def body() -> Any:
    """The request's JSON body; a form post or broken JSON is a 400 naming ``body``."""
    if not request.is_json:
        raise BadInput("body", "must be JSON, sent as Content-Type: application/json")
    try:
        return json.loads(request.get_data(cache=True))
    except (ValueError, RecursionError):
        raise BadInput("body", "is not valid JSON") from None


def with_model(status: int = 200, **extra: Any) -> Response:
    response = jsonify({"ok": True, **extra, "model": ctx().live.model()})
    response.status_code = status
    return response


# ------------------------------------------------------------------ reading
@bp.get("/api/state")
def state() -> Response:
    return jsonify(ctx().live.model())


@bp.get("/api/presets")
def presets() -> Response:
    return jsonify(presets_json())


@bp.get("/api/games")
def games() -> Response:
    return jsonify({"games": ctx().history.games()})


@bp.get("/api/games/<int:game_id>")
def game(game_id: int) -> Response:
    try:
        return jsonify({"game": ctx().history.game(game_id)})
    except KeyError:
        return error(404, "no-such-game", f"There is no game {game_id}")


@bp.get("/events")
def events() -> Response:
    c = ctx()
    try:
        stream = c.live.open_stream(request.headers.get("Last-Event-ID"), heartbeat=c.heartbeat_s)
    except StreamsFull as e:
        response = error(503, "busy", str(e))
        response.headers["Retry-After"] = "5"
        return response
    return Response(stream, mimetype="text/event-stream", headers={
        "Cache-Control": "no-cache, no-transform",
        "X-Accel-Buffering": "no",
    })


# ----------------------------------------------------------------- changing
@bp.post("/api/pin")
@changes
def check_pin() -> Response:
    return jsonify({"ok": True})


@bp.post("/api/game")
@changes
def new_game() -> Response:
    spec, players = parse_setup(body())
    c = ctx()
    c.table.new_game(spec, players)
    return with_model(201, game_id=c.table.game_id)


@bp.post("/api/game/end")
@changes
def end_game() -> Response:
    try:
        ctx().table.end_game()
    except NoGame as e:
        return error(409, "no-game", str(e))
    return with_model()


@bp.post("/api/actions")
@changes
def submit() -> Response:
    c = ctx()
    raw = body()
    before = c.table.state()
    if before is None:
        return error(409, "no-game", "No game is set up: start one first")
    action = parse_action(raw, before)
    try:
        verdict = _judged(action)
    except NoGame as e:
        return error(409, "no-game", str(e))
    except IncompleteScore as e:
        raise BadInput("hands", str(e)) from None
    except RuntimeError as e:  # the camera cannot take it (no hub found, no hands counted)
        return error(409, "camera", str(e))
    if verdict.waiting:  # the camera's open question may make it this player's turn: judged once answered
        return with_model(202, waiting=True, action=action_json(verdict.action))
    if verdict.error is not None:
        alert = None if verdict.alert is None else alert_json(verdict.alert, alert_params(verdict.alert, before))
        return error(409, "illegal", verdict.error.message, None, code=verdict.error.code.value, alert=alert)
    return with_model(seq=verdict.seq, action=action_json(verdict.action))


def _judged(action: Action) -> Verdict:
    """Submit a phone's action: through the camera loop where it must be (see ``create_app``)."""
    c = ctx()
    if isinstance(action, Start) and c.start_round is not None:
        try:
            return _refused(action) or c.start_round(action, "web")
        except IncompleteScore:
            raise
        except ValueError as e:  # the camera sees another engine in the hub
            raise BadInput("engine", str(e)) from None
    if isinstance(action, Score) and c.confirm_score is not None and _as_counted(action, c.live.counted):
        return _refused(action) or c.confirm_score(action, "web")
    # a tile laid wrongly alerts every phone, as it would from the camera; a wrong button does not
    return c.table.submit(action, source="web", alert=isinstance(action, Play))


def _refused(action: Action) -> Verdict | None:
    """The refusal of a button's action, judged before the camera loop sees it (so it raises no alert)."""
    problem = ctx().table.check(action)
    return None if problem is None else Verdict(action, problem)


def _as_counted(score: Score, counted: HandCounts | None) -> bool:
    """Whether the host confirmed exactly the pips the camera counted (and corrected none)."""
    return counted is not None and dict(score.hands) == dict(counted.counts)


@bp.post("/api/undo")
@changes
def undo() -> Response:
    try:
        undone = ctx().undo("web")
    except NoGame as e:
        return error(409, "no-game", str(e))
    if undone is None:
        return error(409, "nothing-to-undo", "Nothing has been recorded in this game yet")
    return with_model(undone=action_json(undone))


@bp.post("/api/alerts/<int:alert_id>/dismiss")
@changes
def dismiss(alert_id: int) -> Response:
    if not ctx().table.clear_alert(alert_id, reason="dismissed"):
        return error(404, "no-such-alert", f"Alert {alert_id} is not showing")
    return with_model()


@bp.post("/api/questions/<int:question_id>/answer")
@changes
def answer(question_id: int) -> Response:
    given = parse_answer(body())
    c = ctx()
    try:
        c.live.answer(question_id, given)
    except QuestionGone as e:
        return error(404, "no-such-question", str(e))
    except BadAnswer as e:
        raise BadInput("answer", str(e)) from None
    return with_model(answer=given)
