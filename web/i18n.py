"""The page's languages: one JSON catalogue per language, chosen from the phone's own settings.

English plus the languages the rule texts came in. A ``?lang=`` link (the switch on every page)
overrides the phone's ``Accept-Language`` and is remembered in a cookie.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from flask import Request

LANGUAGES = {
    "en": "English",
    "tl": "Tagalog",
    "da": "Dansk",
    "hu": "Magyar",
    "eo": "Esperanto",
    "ml": "മലയാളം",
}
ALIASES = {"fil": "tl"}  # phones set to Filipino get the Tagalog catalogue
DEFAULT = "en"
COOKIE = "lang"
CATALOGUES = Path(__file__).parent / "i18n"
PLACEHOLDER = re.compile(r"\{(\w+)\}")


@cache
def catalogue(lang: str) -> dict[str, str]:
    """The strings of one language (read once)."""
    with open(CATALOGUES / f"{lang}.json", encoding="utf-8") as f:
        return json.load(f)


def translate(lang: str, key: str, **params: object) -> str:
    """A string in ``lang``, falling back to English, with ``{name}`` placeholders filled."""
    text = catalogue(lang).get(key) or catalogue(DEFAULT).get(key, key)
    return PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), m.group(0))), text)


def choose(request: Request) -> str:
    """The language for this request: the switch, then the cookie, then the phone's settings."""
    for given in (request.args.get("lang"), request.cookies.get(COOKIE)):
        if given in LANGUAGES:
            return given
    for value, _quality in request.accept_languages:  # best first; "da-DK" counts as "da"
        primary = value.lower().replace("_", "-").split("-")[0]
        primary = ALIASES.get(primary, primary)
        if primary in LANGUAGES:
            return primary
    return DEFAULT
