"""The page in real headless Chromium (Debian's, driven by Playwright) at phone size."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from hub.bus import EventBus
from hub.events import HandCounts, Question, QuestionClosed
from hub.table import Table
from scorekeeper import Out, Play, Score, Start
from scorekeeper.store import Store
from web.app import create_app
from web.server import start_server

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PIN = "4321"
PHONE = {"width": 390, "height": 844}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (make chromium)"),
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def hub():
    bus = EventBus()
    store = Store(":memory:")
    table = Table(store, bus)
    app = create_app(table, bus, pin=PIN)
    handle = start_server(app, "127.0.0.1", 0)
    yield SimpleNamespace(bus=bus, table=table, url=f"http://127.0.0.1:{handle.port}")
    handle.stop()
    store.close()


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, locale="en-GB")
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    # a refused request logs "Failed to load resource"; the tests check those answers themselves
    page.on("console", lambda m: page.errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
    yield page
    context.close()
    assert page.errors == []


def api(hub, path, body=None, pin=PIN):
    request = urllib.request.Request(
        hub.url + path, data=json.dumps(body or {}).encode(), method="POST",
        headers={"Content-Type": "application/json", "X-Table-Pin": pin},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def open_live(phone, url):
    phone.goto(url)
    phone.wait_for_selector("#live[data-state=live]", timeout=5000)


def game_with_rounds(table: Table) -> None:
    table.new_game("classic", ["Ana", "Ben", "Cy"])
    for engine, scores in ((12, {"Ana": 0, "Ben": 31, "Cy": 12}), (11, {"Ana": 22, "Ben": 0, "Cy": 9})):
        first = "Ana" if engine == 12 else "Ben"
        table.submit(Start(engine, first), "test")
        table.submit(Play(first, (engine, 3), first), "test")
        table.submit(Out(first), "test")
        table.submit(Score({p: s for p, s in scores.items() if p != first}), "test")
    table.submit(Start(10, "Cy"), "test")


def test_a_phone_loads_the_scoreboard(hub, phone):
    game_with_rounds(hub.table)
    open_live(phone, hub.url + "/")
    assert phone.text_content("#status-line") == "Round 10|10 · Cy's turn"
    rows = phone.locator(".totals li")
    assert rows.count() == 3
    assert phone.locator(".totals .name").all_text_contents() == ["Ana", "Ben", "Cy"]
    assert phone.locator(".totals .total").all_text_contents() == ["22", "31", "21"]
    assert phone.locator(".totals li.is-lead .name").all_text_contents() == ["Cy"]
    assert phone.locator(".totals li.is-turn .tag.turn").text_content() == "to play"
    rows = phone.locator(".rounds tbody tr")
    cells = [rows.nth(i).locator("th, td").all_text_contents() for i in range(rows.count())]
    assert cells == [["12|12", "0", "31", "12"], ["11|11", "22", "0", "9"]]
    assert phone.locator(".rounds tfoot").locator("th, td").all_text_contents() == ["Total", "22", "31", "21"]
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_play_made_through_the_api_shows_within_a_second(hub, phone):
    hub.table.new_game("classic", ["Ana", "Ben", "Cy"])
    hub.table.submit(Start(12, "Ana"), "test")
    open_live(phone, hub.url + "/board")
    assert phone.locator('[data-train="Ana"] .tile').count() == 0
    sent = time.monotonic()
    assert api(hub, "/api/actions", {"act": "play", "player": "Ana", "tile": [12, 7], "train": "Ana"})[0] == 200
    phone.wait_for_selector('[data-train="Ana"] .tile.last', timeout=1000)
    assert time.monotonic() - sent < 1.0
    assert phone.locator('[data-train="Ana"] .tile.last text').all_text_contents() == ["12", "7"]
    assert phone.locator('[data-train="Ana"] .end').text_content() == "7"
    assert phone.text_content("#board-status") == "Round 12|12 · Ben's turn"


def test_an_illegal_play_shows_its_alert_in_the_phone_language(hub, browser):
    hub.table.new_game("classic", ["Ana", "Ben", "Cy"])
    hub.table.submit(Start(12, "Ana"), "test")
    hub.table.submit(Play("Ana", (12, 6), "Ana"), "test")
    context = browser.new_context(viewport=PHONE, is_mobile=True, locale="da-DK")
    english = browser.new_context(viewport=PHONE, is_mobile=True, locale="en-GB")
    da, en = context.new_page(), english.new_page()
    open_live(da, hub.url + "/board")
    open_live(en, hub.url + "/board")
    status, body = api(hub, "/api/actions", {"act": "play", "player": "Ben", "tile": [4, 9], "train": "Ben"})
    assert status == 409 and body["code"] == "no-match"
    en.wait_for_selector(".banner.alert", timeout=1000)
    assert "Ben: 4|9 does not match Ben's train, which ends in 12" in en.text_content(".banner.alert")
    assert en.locator('.lane.has-alert[data-train="Ben"] .tile.illegal').count() == 1
    da.wait_for_selector(".banner.alert", timeout=1000)
    assert "Ben: 4|9 passer ikke til Bens tog, som ender på 12" in da.text_content(".banner.alert")
    hub.table.clear_alert(body["alert"]["id"])
    en.wait_for_selector(".banner.alert", state="detached", timeout=1000)
    context.close()
    english.close()


def test_the_set_up_form_starts_a_game(hub, phone):
    open_live(phone, hub.url + "/setup")
    inputs = phone.locator("#players input")
    inputs.nth(0).fill("Nora")
    inputs.nth(1).fill("Oskar")
    phone.click("#add-player")
    inputs.nth(2).fill("Pia")
    phone.locator("#players li").nth(2).locator("[data-move='-1']").click()  # Pia sits second
    phone.click("label.preset:has-text('Dominos.cc')")
    phone.click("#house-rules summary")
    phone.check("#opt-positive_scoring")
    phone.select_option("#opt-close_doubles", "reverse")
    phone.click("#setup-form button[type=submit]")
    phone.wait_for_selector("#pin-dialog[open]")
    phone.fill("#pin-dialog input", "0000")
    phone.click("#pin-dialog button[value=ok]")
    phone.wait_for_selector("#pin-dialog .pin-message:has-text('wrong')")
    phone.fill("#pin-dialog input", PIN)
    phone.click("#pin-dialog button[value=ok]")
    phone.wait_for_url(hub.url + "/", timeout=5000)
    phone.wait_for_selector(".totals li")
    assert phone.locator(".totals .name").all_text_contents() == ["Nora", "Pia", "Oskar"]
    game = hub.table.state()
    assert game.players == ("Nora", "Pia", "Oskar") and game.preset == "dominos-cc"
    assert hub.table.rules_spec == {"preset": "dominos-cc", "close_doubles": "reverse", "positive_scoring": True}


def test_a_bad_set_up_names_the_field(hub, phone):
    phone.goto(hub.url + "/setup")
    phone.evaluate(f"localStorage.setItem('domino-hub.pin', '{PIN}')")
    open_live(phone, hub.url + "/setup")
    phone.locator("#players input").nth(0).fill("Ana")
    phone.locator("#players input").nth(1).fill("ana")
    phone.click("#setup-form button[type=submit]")
    phone.wait_for_selector("#players input.invalid")
    assert "players[1]" in phone.text_content("#setup-error")
    assert hub.table.state() is None


def test_the_end_of_round_counts_are_editable_then_confirmed(hub, phone):
    hub.table.new_game("classic", ["Ana", "Ben", "Cy"])
    hub.table.submit(Start(12, "Ana", {"Ana": 1, "Ben": 4, "Cy": 5}), "test")  # the hands the table dealt
    hub.table.submit(Play("Ana", (12, 3), "Ana"), "test")
    hub.table.submit(Out("Ana"), "test")
    phone.goto(hub.url + "/round")
    phone.evaluate(f"localStorage.setItem('domino-hub.pin', '{PIN}')")
    open_live(phone, hub.url + "/round")
    hub.bus.publish(HandCounts({"Ana": 0, "Ben": 17, "Cy": 40}, {"Ana": 0, "Ben": 4, "Cy": 2}))
    phone.wait_for_selector(".pips .tag.camera")
    assert phone.input_value("#pips-Ben") == "17"
    # Cy's seat shows fewer tiles than Cy holds: the page says so, for a person to check that count
    assert phone.locator(".pips .tag.short").all_text_contents() == ["2 of 5 tiles seen"]
    assert phone.locator(".pips .tag.over").count() == 0  # Ben's seat shows the 4 tiles Ben holds
    # counted again: now Ben's seat shows a tile more than Ben holds (something beside the hand read as a tile)
    hub.bus.publish(HandCounts({"Ana": 0, "Ben": 17, "Cy": 40}, {"Ana": 0, "Ben": 5, "Cy": 5}))
    phone.wait_for_selector(".pips .tag.over")
    assert phone.locator(".pips .tag.over").all_text_contents() == ["5 tiles seen, 4 held"]
    assert phone.locator(".pips .tag.short").count() == 0
    phone.fill("#pips-Cy", "41")  # the camera misread a tile
    phone.click("#score-form button[type=submit]")
    phone.wait_for_selector("#start-form", timeout=3000)
    assert hub.table.state().rounds[-1].scores == {"Ana": 0, "Ben": 17, "Cy": 41}
    phone.click("#start-form button[type=submit]")  # the next engine and the proposed first player
    phone.wait_for_selector("#blocked", timeout=3000)
    assert hub.table.state().engine == 11


def test_a_question_from_the_camera_is_answered_on_the_phone(hub, phone):
    answers = []
    sub = hub.bus.subscribe(lambda env: answers.append(env.event) if isinstance(env.event, QuestionClosed) else None,
                            "test")
    phone.goto(hub.url + "/")
    phone.evaluate(f"localStorage.setItem('domino-hub.pin', '{PIN}')")
    open_live(phone, hub.url + "/")
    hub.bus.publish(Question(3, "Was that 7|11?", ("7|11", "7|12")))
    phone.wait_for_selector(".banner.question")
    assert "Was that 7|11?" in phone.text_content(".banner.question")
    phone.click(".banner.question button[data-answer='7|12']")
    phone.wait_for_selector(".banner.question", state="detached", timeout=3000)
    assert sub.drain()
    assert answers == [QuestionClosed(3, "7|12")]
    sub.close()


def test_a_tile_the_camera_did_not_offer_is_typed_in_and_survives_the_page_redrawing(phone):
    """A missed play: the camera offers nothing right, so the phone types the tile."""
    bus = EventBus()
    store = Store(":memory:")
    heard: list[tuple[int, str]] = []

    def answer_question(question_id: int, answer: str) -> None:  # the camera's side, as hub.reconciler does it
        heard.append((question_id, answer))
        bus.publish(QuestionClosed(question_id, answer))

    app = create_app(Table(store, bus), bus, pin=PIN, answer_question=answer_question)
    handle = start_server(app, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{handle.port}"
    try:
        phone.goto(url + "/")
        phone.evaluate(f"localStorage.setItem('domino-hub.pin', '{PIN}')")
        open_live(phone, url + "/")
        bus.publish(Question(4, "Ben drew, but by the hub's count it is Ana's turn. What did Ana lay?",
                             ("nothing was missed",), typed=True))
        phone.wait_for_selector(".banner.question form.typed input")
        phone.fill(".banner.question form.typed input", "5 | 8")
        bus.publish(Question(5, "The engine is 12|12. Who goes first?", ("Ana", "Ben")))  # the banners redraw
        phone.wait_for_selector(".banner.question[data-question-id='5']")
        assert phone.input_value(".banner.question[data-question-id='4'] input") == "5 | 8"
        assert phone.query_selector(".banner.question[data-question-id='5'] form.typed") is None
        phone.click(".banner.question[data-question-id='4'] form.typed button[type='submit']")
        phone.wait_for_selector(".banner.question[data-question-id='4']", state="detached", timeout=3000)
        assert heard == [(4, "5|8")]
    finally:
        handle.stop()
        store.close()
