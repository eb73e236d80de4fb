"""The Flask app the phones open: ``create_app(table, bus, pin=...)``, served by :mod:`web.server`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

from hub.bus import EventBus
from hub.table import Table, Verdict
from scorekeeper import Action, Score, Start

from .guard import Guard, Refused
from .history import History
from .i18n import COOKIE, LANGUAGES
from .live import Live
from .validate import BadInput

log = logging.getLogger(__name__)

CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


@dataclass
class WebContext:
    """What every request needs: the table it changes, the live model it reads, the PIN guard."""

    table: Table
    bus: EventBus
    live: Live
    guard: Guard
    history: History
    join_url: str | None
    heartbeat_s: float
    undo: Callable[[str], Action | None]
    start_round: Callable[[Start, str], Verdict] | None
    confirm_score: Callable[[Score, str], Verdict] | None


def ctx() -> WebContext:
    return current_app.extensions["domino_hub"]


def create_app(
    table: Table,
    bus: EventBus,
    pin: str,
    *,
    join_url: str | None = None,
    max_streams: int = 40,
    heartbeat_s: float = 10.0,
    answer_question: Callable[[int, str], object] | None = None,
    undo: Callable[[str], Action | None] | None = None,
    start_round: Callable[[Start, str], Verdict] | None = None,
    confirm_score: Callable[[Score, str], Verdict] | None = None,
) -> Flask:
    """The page for one table. ``pin`` guards every change; ``join_url`` overrides the QR code's address.

    ``answer_question(question_id, answer)`` is whoever asked "Was that 7|11?" (the camera's
    reconciler): it raises KeyError for a question no longer open and ValueError for an answer it
    cannot use. Without it, an answer must be one of the choices and is published on the bus.

    With a camera watching, the actions that change what it must look for pass through its loop
    instead of going straight to the Table: ``undo(source)`` (so a tile still lying there is not
    recorded again), ``start_round(start, source)`` (so the last round's tiles stop holding their
    trains) and ``confirm_score(score, source)``, called when the host confirms exactly the hands
    the camera counted (so the round is scored with the tiles it read). They raise TimeoutError
    when the camera loop does not take the action in time.
    """
    from . import api, pages

    app = Flask(__name__)
    app.config.update(MAX_CONTENT_LENGTH=64 * 1024, TEMPLATES_AUTO_RELOAD=False)
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["domino_hub"] = WebContext(
        table=table,
        bus=bus,
        live=Live(table, bus, max_streams=max_streams, answer_question=answer_question),
        guard=Guard(pin),
        history=History(table.store),
        join_url=join_url,
        heartbeat_s=heartbeat_s,
        undo=undo or table.undo,
        start_round=start_round,
        confirm_score=confirm_score,
    )
    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_error_handler(Refused, _refused)
    app.register_error_handler(BadInput, _bad_input)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(TimeoutError, _camera_busy)
    app.register_error_handler(Exception, _unexpected)
    app.after_request(_headers)
    return app


def error(status: int, kind: str, message: str, field: str | None = None, **extra: object) -> Response:
    """A JSON error: ``error`` is a stable code a page can translate, ``field`` names bad input."""
    body: dict[str, object] = {"error": kind, "message": message}
    if field is not None:
        body["field"] = field
    body.update(extra)
    response = jsonify(body)
    response.status_code = status
    return response


def _refused(e: Refused) -> Response:
    return error(e.status, e.code, e.message, e.field)


def _bad_input(e: BadInput) -> Response:
    return error(400, "bad-input", e.message, e.field)


def _camera_busy(e: TimeoutError) -> Response:
    response = error(503, "camera-busy", str(e))
    response.headers["Retry-After"] = "5"
    return response


def _wants_json() -> bool:
    return request.path.startswith(("/api/", "/events")) or request.method != "GET"


def _http_error(e: HTTPException) -> Response | HTTPException:
    if not _wants_json():
        return e
    code = (e.name or "error").lower().replace(" ", "-")
    field = "body" if e.code == 413 else None
    return error(e.code or 500, code, e.description or e.name, field)


def _unexpected(e: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, request.path)
    return error(500, "internal", "Something went wrong on the hub; nothing was changed")


def _headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    lang = request.args.get("lang")
    if lang in LANGUAGES and request.cookies.get(COOKIE) != lang:
        response.set_cookie(COOKIE, lang, max_age=365 * 24 * 3600, samesite="Lax")
    return response
