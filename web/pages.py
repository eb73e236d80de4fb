"""The pages. Each is a thin HTML shell; its script draws it from the live model (see static/js)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, abort, render_template, request

from .app import ctx
from .i18n import DEFAULT, LANGUAGES, catalogue, choose, translate
from .model import presets_json
from .qr import join_url, qr_svg

bp = Blueprint("pages", __name__)

NAV = (("scoreboard", "/"), ("board", "/board"), ("round", "/round"), ("setup", "/setup"),
       ("history", "/history"), ("join", "/join"))


def page(name: str, **extra: Any) -> str:
    lang = choose(request)
    strings = {**catalogue(DEFAULT), **catalogue(lang)}
    boot = {"page": name, "lang": lang, "strings": strings, "model": ctx().live.model(), **extra}
    return render_template(
        f"{name}.html",
        page_name=name,
        lang=lang,
        languages=LANGUAGES,
        nav=NAV,
        boot=boot,
        t=lambda key, **params: translate(lang, key, **params),
    )


@bp.get("/")
def scoreboard() -> str:
    return page("scoreboard")


@bp.get("/board")
def board() -> str:
    return page("board")


@bp.get("/round")
def round_end() -> str:
    return page("round")


@bp.get("/setup")
def setup() -> str:
    return page("setup", **presets_json())


@bp.get("/history")
def history() -> str:
    return page("history", games=ctx().history.games())


@bp.get("/history/<int:game_id>")
def past_game(game_id: int) -> str:
    try:
        game = ctx().history.game(game_id)
    except KeyError:
        abort(404)
    return page("game", past=game)


@bp.get("/join")
def join() -> str:
    return page("join", url=join_url(request.host_url, ctx().join_url))


@bp.get("/qr.svg")
def qr() -> Response:
    svg = qr_svg(join_url(request.host_url, ctx().join_url))
    return Response(svg, mimetype="image/svg+xml", headers={"Cache-Control": "no-cache"})
