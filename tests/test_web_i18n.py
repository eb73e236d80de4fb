"""The page's languages: complete catalogues, every string the page uses, and choosing a language."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hub.bus import EventBus
from hub.table import Table
from scorekeeper import PRESETS, Code
from scorekeeper.rules import CLOSE_DOUBLES, DOUBLES, FIRST_PLAYER, FIRST_TURN
from scorekeeper.store import Store
from scorekeeper.tiles import SUPPORTED_SETS
from web.app import create_app
from web.i18n import CATALOGUES, LANGUAGES, catalogue
from web.validate import RULE_OPTIONS

WEB = Path(__file__).resolve().parent.parent / "web"
OTHERS = [lang for lang in LANGUAGES if lang != "en"]
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def test_there_is_one_catalogue_per_language():
    assert sorted(p.stem for p in CATALOGUES.glob("*.json")) == sorted(LANGUAGES)
    assert set(LANGUAGES) == {"en", "tl", "da", "hu", "eo", "ml"}


@pytest.mark.parametrize("lang", OTHERS)
def test_every_key_is_in_every_language(lang):
    english, other = catalogue("en"), catalogue(lang)
    assert sorted(set(english) - set(other)) == [], f"missing from {lang}"
    assert sorted(set(other) - set(english)) == [], f"unknown keys in {lang}"


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_placeholders_match_english_and_nothing_is_empty(lang):
    english, other = catalogue("en"), catalogue(lang)
    for key, text in other.items():
        assert text.strip(), f"{lang}: {key} is empty"
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(english[key])), f"{lang}: {key}"


@pytest.mark.parametrize("lang", OTHERS)
def test_translations_are_translated(lang):
    english, other = catalogue("en"), catalogue(lang)
    same = [k for k in english if english[k] == other[k]]
    assert len(same) < 0.1 * len(english), f"{lang} leaves these in English: {same}"


def used_keys() -> set[str]:
    """Literal keys in the templates' ``t(...)`` and the scripts' ``T(...)``, ternaries included."""
    keys: set[str] = set()
    for template in (WEB / "templates").glob("*.html"):
        keys |= set(re.findall(r"""\bt\(\s*['"]([\w.-]+)['"]\s*[,)]""", template.read_text(encoding="utf-8")))
    for script in (WEB / "static" / "js").glob("*.js"):
        text = script.read_text(encoding="utf-8")
        keys |= set(re.findall(r"""\bT\(\s*["']([\w.-]+)["']\s*[,)]""", text))
        for a, b in re.findall(r"""\bT\([^()]*\?\s*["']([\w.-]+)["']\s*:\s*["']([\w.-]+)["']""", text):
            keys |= {a, b}
    return keys


def dynamic_keys() -> set[str]:
    """Keys the pages build from values: verdict codes, presets, rule options, camera states, pages."""
    keys = {f"alert.{c.value}" for c in Code}
    keys |= {f"camera.{s}" for s in ("starting", "reconnecting", "lost", "knocked")}
    keys |= {f"live.{s}" for s in ("connecting", "live", "reconnecting", "offline")}
    keys |= {f"preset.{p}" for p in PRESETS} | {f"preset.{p}.help" for p in PRESETS}
    keys |= {f"rule.{o}" for o in RULE_OPTIONS} | {f"rule.{o}.help" for o in RULE_OPTIONS}
    keys |= {f"round.first.{v}" for v in FIRST_PLAYER}
    keys |= {f"nav.{p}" for p in ("scoreboard", "board", "round", "setup", "history", "join", "game")}
    for option, values in (("set", SUPPORTED_SETS), ("first_player", FIRST_PLAYER), ("first_turn", FIRST_TURN),
                           ("doubles", DOUBLES), ("close_doubles", CLOSE_DOUBLES)):
        keys |= {f"value.{option}.{v}" for v in values}
    keys |= {f"error.{e}" for e in ("cross-site", "too-many-tries", "no-game", "nothing-to-undo", "no-such-alert",
                                    "no-such-question", "busy")}
    return keys


def test_every_string_the_pages_use_is_in_the_catalogue():
    keys = used_keys()
    assert len(keys) > 100  # the scan itself works
    assert sorted((keys | dynamic_keys()) - set(catalogue("en"))) == []


def test_no_string_in_the_catalogue_is_unused():
    assert sorted(set(catalogue("en")) - used_keys() - dynamic_keys()) == []


# ------------------------------------------------------------------ choosing
@pytest.fixture
def client():
    bus = EventBus()
    store = Store(":memory:")
    app = create_app(Table(store, bus), bus, pin="1")
    yield app.test_client()
    app.extensions["domino_hub"].live.close()
    store.close()


def page_lang(response) -> tuple[str, str]:
    html = response.get_data(as_text=True)
    boot = json.loads(re.search(r'<script id="boot" type="application/json">(.*?)</script>', html, re.S).group(1))
    return re.search(r'<html lang="([\w-]+)">', html).group(1), boot["strings"]["nav.board"]


@pytest.mark.parametrize(("header", "lang"), [
    ("da-DK,da;q=0.9,en;q=0.8", "da"),
    ("hu", "hu"),
    ("fil-PH", "tl"),
    ("tl", "tl"),
    ("ml-IN,en;q=0.5", "ml"),
    ("eo", "eo"),
    ("fr-FR,de;q=0.8", "en"),
    ("", "en"),
])
def test_the_page_follows_the_phone_language(client, header, lang):
    html_lang, board = page_lang(client.get("/board", headers={"Accept-Language": header}))
    assert html_lang == lang
    assert board == catalogue(lang)["nav.board"]


def test_the_switch_overrides_the_phone_and_is_remembered(client):
    r = client.get("/?lang=eo", headers={"Accept-Language": "da"})
    assert page_lang(r)[0] == "eo"
    assert "lang=eo" in r.headers["Set-Cookie"]
    assert page_lang(client.get("/", headers={"Accept-Language": "da"}))[0] == "eo"
    assert page_lang(client.get("/?lang=xx", headers={"Accept-Language": "da"}))[0] == "eo"


def test_every_page_offers_every_language(client):
    html = client.get("/setup").get_data(as_text=True)
    for code, name in LANGUAGES.items():
        assert f'href="?lang={code}"' in html and name in html
