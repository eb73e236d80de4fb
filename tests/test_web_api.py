"""The page's JSON API through Flask's test client: rights, bad input, the game's life cycle."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from hub.bus import EventBus
from hub.events import CameraStatus, HandCounts, Question, QuestionClosed
from hub.table import Table
from scorekeeper.store import Store
from web.app import create_app

PIN = "2468"


@pytest.fixture
def hub():
    bus = EventBus()
    store = Store(":memory:")
    table = Table(store, bus)
    app = create_app(table, bus, pin=PIN)
    live = app.extensions["domino_hub"].live
    yield SimpleNamespace(bus=bus, table=table, app=app, client=app.test_client(), live=live)
    live.close()
    store.close()


def post(hub, path, body=None, pin=PIN, **headers):
    if pin is not None:
        headers["X-Table-Pin"] = pin
    return hub.client.post(path, json=body, headers=headers)


def start_game(hub, players=("Ana", "Ben", "Cy"), rules="classic"):
    r = post(hub, "/api/game", {"players": list(players), "rules": rules})
    assert r.status_code == 201, r.json
    r = post(hub, "/api/actions", {"act": "start", "engine": 12, "first": players[0]})
    assert r.status_code == 200, r.json


def state(hub):
    return hub.client.get("/api/state").json


# ------------------------------------------------------------------ reading is free
@pytest.mark.parametrize("path", ["/", "/board", "/round", "/setup", "/history", "/join"])
def test_every_page_is_served_with_the_model_and_no_outside_assets(hub, path):
    start_game(hub)
    r = hub.client.get(path)
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    boot = json.loads(re.search(r'<script id="boot" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert boot["model"]["game"]["players"] == ["Ana", "Ben", "Cy"]
    assert "Content-Security-Policy" in r.headers
    assert not re.search(r'(src="|<link[^>]*href="|url\()(https?:)?//', html), "every asset must come from the hub"


def test_static_assets_are_served_by_the_app(hub):
    html = hub.client.get("/board").get_data(as_text=True)
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        assert hub.client.get(asset).status_code == 200, asset
    for module in ("core", "scoreboard", "board", "round", "setup", "history", "game", "join"):
        assert hub.client.get(f"/static/js/{module}.js").status_code == 200


def test_state_with_no_game(hub):
    s = state(hub)
    assert s == {"game": None, "alerts": [], "camera": {"status": "unknown", "detail": ""}, "questions": [],
                 "counted": None}


def test_state_holds_the_whole_game(hub):
    start_game(hub)
    for body in (
        {"act": "play", "player": "Ana", "tile": [12, 5], "train": "mexican"},
        {"act": "play", "player": "Ben", "tile": [5, 5], "train": "mexican"},
        {"act": "draw", "player": "Ben"},
        {"act": "pass", "player": "Ben"},
    ):
        assert post(hub, "/api/actions", body).status_code == 200, body
    game = state(hub)["game"]
    assert game["players"] == ["Ana", "Ben", "Cy"]
    assert game["turn"] == "Cy" and game["markers"] == ["Ben"]
    assert game["phase"] == "playing" and game["engine"] == 12 and game["round"] == 12
    assert game["open_doubles"] == [{"train": "mexican", "value": 5}]
    mexican = game["trains"][-1]
    assert mexican["name"] == "mexican" and mexican["owner"] is None
    assert mexican["tiles"] == [[12, 5], [5, 5]] and mexican["open_double"] == 5 and mexican["end"] == 5
    assert [t["marker"] for t in game["trains"]] == [False, True, False, False]
    assert game["last_play"] == {"player": "Ben", "train": "mexican", "tile": [5, 5]}
    assert game["rules"]["preset"] == "classic" and game["scores"] == {"Ana": 0, "Ben": 0, "Cy": 0}


def test_a_press_that_waits_for_the_cameras_question_is_accepted_for_later(hub):
    start_game(hub)
    hub.table.hold_presses(True)  # what the camera does while it asks which tile was just laid
    r = post(hub, "/api/actions", {"act": "draw", "player": "Ben"})
    assert r.status_code == 202 and r.json["waiting"] is True and r.json["action"] == {"act": "draw", "player": "Ben"}
    assert state(hub)["game"]["turn"] == "Ana" and state(hub)["alerts"] == []
    post(hub, "/api/actions", {"act": "play", "player": "Ana", "tile": [12, 5], "train": "Ana"})
    (verdict,) = hub.table.hold_presses(False)  # the question is answered
    assert verdict.ok and state(hub)["game"]["turn"] == "Ben"


def test_the_pages_undo_takes_back_a_press_still_waiting_before_anything_stored(hub):
    start_game(hub)
    hub.table.hold_presses(True)
    assert post(hub, "/api/actions", {"act": "draw", "player": "Ben"}).status_code == 202
    r = post(hub, "/api/undo")
    assert r.status_code == 200 and r.json["undone"] == {"act": "draw", "player": "Ben"}
    assert hub.table.waiting_presses() == () and state(hub)["game"]["phase"] == "playing"  # the start stands
    assert post(hub, "/api/undo").json["undone"]["act"] == "start"


def test_events_stream_starts_with_the_model_then_catches_up_from_its_id(hub):
    start_game(hub)
    assert hub.live.drain()  # the page has taken in the new game (its subscriber runs on its own thread)
    r = hub.client.get("/events", buffered=False)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    chunks = iter(r.response)
    assert next(chunks).startswith(b"retry:")
    first = next(chunks).decode()
    event_id = re.search(r"^id: (\S+)$", first, re.M).group(1)
    assert "event: state" in first and '"players":["Ana","Ben","Cy"]' in first
    r.close()
    post(hub, "/api/actions", {"act": "play", "player": "Ana", "tile": [12, 3], "train": "Ana"})
    assert hub.live.drain()
    r = hub.client.get("/events", buffered=False, headers={"Last-Event-ID": event_id})
    chunks = iter(r.response)
    next(chunks)
    missed = next(chunks).decode()
    assert "event: update" in missed and '"type":"applied"' in missed
    r.close()


def test_presets_list_every_rule_option(hub):
    r = hub.client.get("/api/presets").json
    assert set(r["presets"]) == {"classic", "dominos-cc", "cardinal"}
    assert r["choices"]["doubles"] == ["satisfy", "follow"]
    assert "no_foreign_trains_first_turn" in r["presets"]["classic"]


def test_unknown_api_paths_and_methods_answer_json(hub):
    r = hub.client.get("/api/nothing")
    assert r.status_code == 404 and r.json["error"] == "not-found"
    r = hub.client.get("/api/undo")
    assert r.status_code == 405 and r.json["error"] == "method-not-allowed"


# ------------------------------------------------------------------ rights
def test_a_change_without_the_pin_is_refused_and_changes_nothing(hub):
    r = post(hub, "/api/game", {"players": ["Ana", "Ben"]}, pin=None)
    assert r.status_code == 401
    assert r.json["error"] == "pin-required" and r.json["field"] == "pin"
    assert state(hub)["game"] is None


def test_a_wrong_pin_is_refused(hub):
    r = post(hub, "/api/game", {"players": ["Ana", "Ben"]}, pin="1111")
    assert r.status_code == 403 and r.json["error"] == "wrong-pin"
    assert state(hub)["game"] is None
    assert post(hub, "/api/pin").status_code == 200
    assert post(hub, "/api/pin", pin="0000").status_code == 403


CHANGES = [
    ("/api/game", {"players": ["Ana", "Ben"]}),
    ("/api/game/end", None),
    ("/api/actions", {"act": "pass", "player": "Ben"}),
    ("/api/undo", None),
    ("/api/alerts/1/dismiss", None),
    ("/api/questions/1/answer", {"answer": "7|11"}),
    ("/api/pin", None),
]


@pytest.mark.parametrize(("path", "body"), CHANGES)
def test_every_change_needs_the_pin_from_this_site(hub, path, body):
    start_game(hub)
    before = state(hub)
    assert post(hub, path, body, pin=None).status_code == 401
    assert post(hub, path, body, pin="0000").status_code == 403
    r = post(hub, path, body, Origin="http://evil.example")
    assert r.status_code == 403 and r.json["error"] == "cross-site"
    assert state(hub) == before


def test_guessing_the_pin_is_slowed_down(hub):
    for _ in range(10):
        assert post(hub, "/api/pin", pin="0000").status_code == 403
    r = post(hub, "/api/pin", pin=PIN)
    assert r.status_code == 429 and r.json["error"] == "too-many-tries"


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
])
def test_cross_site_requests_are_refused_even_with_the_pin(hub, headers):
    r = post(hub, "/api/game", {"players": ["Ana", "Ben"]}, **headers)
    assert r.status_code == 403 and r.json["error"] == "cross-site"
    assert state(hub)["game"] is None


def test_a_request_from_the_page_itself_is_accepted(hub):
    same_site = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    r = post(hub, "/api/game", {"players": ["Ana", "Ben"]}, **same_site)
    assert r.status_code == 201


def test_a_form_post_is_not_json_and_is_refused(hub):
    r = hub.client.post("/api/game", data={"players": "Ana"}, headers={"X-Table-Pin": PIN})
    assert r.status_code == 400 and r.json["field"] == "body"
    r = hub.client.post("/api/game", data="{not json", content_type="application/json", headers={"X-Table-Pin": PIN})
    assert r.status_code == 400 and r.json["field"] == "body"


def test_an_oversized_body_is_refused(hub):
    r = post(hub, "/api/game", {"players": ["x" * 100_000]})
    assert r.status_code == 413 and r.json["field"] == "body"


# ------------------------------------------------------------------ set-up
def test_set_up_a_game_with_house_rules(hub):
    rules = {"preset": "classic", "set": 9, "positive_scoring": True, "close_doubles": "reverse"}
    r = post(hub, "/api/game", {"players": [" Ana ", "Ben", "Cy"], "rules": rules})
    assert r.status_code == 201
    game = r.json["model"]["game"]
    assert game["players"] == ["Ana", "Ben", "Cy"]
    assert game["set"] == 9 and game["rules"]["positive_scoring"] is True
    assert game["rules"]["engines"] == list(range(9, -1, -1))
    assert game["rules"]["close_doubles"] == "reverse"


@pytest.mark.parametrize(("body", "field"), [
    ({}, "players"),
    ({"players": []}, "players"),
    ({"players": "Ana,Ben"}, "players"),
    ({"players": ["Ana", 7]}, "players[1]"),
    ({"players": ["Ana", "  "]}, "players[1]"),
    ({"players": ["Ana", "ana"]}, "players[1]"),
    ({"players": ["Ana", "Mexican"]}, "players[1]"),
    ({"players": ["Ana", "x" * 25]}, "players[1]"),
    ({"players": ["Ana"]}, "players"),
    ({"players": ["A", "B", "C", "D", "E"], "rules": "dominos-cc"}, "players"),
    ({"players": ["Ana", "Ben"], "rules": "chess"}, "rules.preset"),
    ({"players": ["Ana", "Ben"], "rules": {"preset": 3}}, "rules.preset"),
    ({"players": ["Ana", "Ben"], "rules": {"set": 10}}, "rules.set"),
    ({"players": ["Ana", "Ben"], "rules": {"set": "12"}}, "rules.set"),
    ({"players": ["Ana", "Ben"], "rules": {"doubles": "maybe"}}, "rules.doubles"),
    ({"players": ["Ana", "Ben"], "rules": {"engines": [12, 99]}}, "rules.engines"),
    ({"players": ["Ana", "Ben"], "rules": {"engines": "12 11"}}, "rules.engines"),
    ({"players": ["Ana", "Ben"], "rules": {"hand_sizes": {"two": 5}}}, "rules.hand_sizes"),
    ({"players": ["Ana", "Ben"], "rules": {"positive_scoring": "yes"}}, "rules.positive_scoring"),
    ({"players": ["Ana", "Ben"], "rules": {"colour": "red"}}, "rules.colour"),
    ({"players": ["Ana", "Ben"], "rules": []}, "rules"),
    ({"players": ["Ana", "Ben"], "table": 1}, "table"),
])
def test_bad_set_up_is_a_400_naming_the_field_and_keeps_the_open_game(hub, body, field):
    start_game(hub)
    before = state(hub)
    r = post(hub, "/api/game", body)
    assert r.status_code == 400, r.json
    assert r.json["error"] == "bad-input" and r.json["field"] == field and r.json["message"]
    assert state(hub) == before


def test_end_game_keeps_its_final_table_and_history(hub):
    start_game(hub)
    game_id = hub.table.game_id
    r = post(hub, "/api/game/end")
    assert r.status_code == 200
    assert r.json["model"]["game"]["ended"] is True
    assert state(hub)["game"]["id"] == game_id  # the last table stays on the scoreboard
    assert post(hub, "/api/game/end").json["error"] == "no-game"
    games = hub.client.get("/api/games").json["games"]
    assert [g["id"] for g in games] == [game_id] and games[0]["ended"] is True
    assert hub.client.get(f"/api/games/{game_id}").json["game"]["players"] == ["Ana", "Ben", "Cy"]
    assert hub.client.get("/api/games/99").status_code == 404
    assert hub.client.get(f"/history/{game_id}").status_code == 200
    assert hub.client.get("/history/99").status_code == 404


# ------------------------------------------------------------------ actions
def test_no_game_means_409(hub):
    for path, body in (("/api/actions", {"act": "blocked"}), ("/api/undo", None)):
        r = post(hub, path, body)
        assert r.status_code == 409 and r.json["error"] == "no-game"


def test_a_legal_play_is_stored_and_published(hub):
    start_game(hub)
    r = post(hub, "/api/actions", {"act": "play", "player": "Ana", "tile": [5, 12], "train": "mexican"})
    assert r.status_code == 200
    assert r.json["seq"] == 1
    assert r.json["action"] == {"act": "play", "player": "Ana", "tile": [5, 12], "train": "mexican"}
    assert r.json["model"]["game"]["turn"] == "Ben"
    assert hub.table.store.load(hub.table.game_id).actions[-1].tile == (5, 12)


def test_an_illegal_play_is_409_and_alerts_every_phone(hub):
    start_game(hub)
    r = post(hub, "/api/actions", {"act": "play", "player": "Ana", "tile": [4, 9], "train": "Ana"})
    assert r.status_code == 409
    assert r.json["error"] == "illegal" and r.json["code"] == "no-match"
    assert "4|9" in r.json["message"]
    alerts = state(hub)["alerts"]
    assert len(alerts) == 1
    a = alerts[0]
    assert (a["player"], a["tile"], a["train"], a["code"]) == ("Ana", [4, 9], "Ana", "no-match")
    assert a["params"]["end"] == 12
    assert a["text"] == "Ana: 4|9 does not match Ana's train, which ends in 12"
    assert state(hub)["game"]["trains"][0]["tiles"] == []  # nothing was applied


def test_a_wrong_button_is_409_without_an_alert(hub):
    start_game(hub)
    r = post(hub, "/api/actions", {"act": "pass", "player": "Cy"})
    assert r.status_code == 409 and r.json["code"] == "not-your-turn"
    assert state(hub)["alerts"] == []


def test_alerts_can_be_dismissed_with_the_pin(hub):
    start_game(hub)
    illegal = {"act": "play", "player": "Ana", "tile": [4, 9], "train": "Ana"}
    alert_id = post(hub, "/api/actions", illegal).json["alert"]["id"]
    assert post(hub, f"/api/alerts/{alert_id}/dismiss", pin=None).status_code == 401
    assert post(hub, f"/api/alerts/{alert_id}/dismiss").status_code == 200
    assert state(hub)["alerts"] == []
    assert post(hub, f"/api/alerts/{alert_id}/dismiss").status_code == 404


@pytest.mark.parametrize(("body", "field"), [
    ({}, "act"),
    ({"act": "dance"}, "act"),
    ({"act": 3}, "act"),
    ({"act": "play", "player": "Ana", "train": "Ana"}, "tile"),
    ({"act": "play", "player": "Ana", "tile": "4|9", "train": "Ana"}, "tile"),
    ({"act": "play", "player": "Ana", "tile": [4], "train": "Ana"}, "tile"),
    ({"act": "play", "player": "Ana", "tile": [4, True], "train": "Ana"}, "tile[1]"),
    ({"act": "play", "player": "Ana", "tile": [4, -1], "train": "Ana"}, "tile[1]"),
    ({"act": "play", "player": 1, "tile": [4, 9], "train": "Ana"}, "player"),
    ({"act": "play", "player": "Ana", "tile": [4, 9]}, "train"),
    ({"act": "play", "player": "Ana", "tile": [4, 9], "train": "Ana", "x": 1}, "x"),
    ({"act": "draw"}, "player"),
    ({"act": "start", "engine": "12", "first": "Ana"}, "engine"),
    ({"act": "start", "engine": 12}, "first"),
    ({"act": "start", "engine": 11, "first": "Ana", "hands": {"Ana": 15}}, "hands.Ben"),
    ({"act": "score", "hands": {"Ana": 3, "Ben": 4}}, "hands.Cy"),
    ({"act": "score", "hands": {"Ana": -3, "Ben": 4, "Cy": 1}}, "hands.Ana"),
    ({"act": "score", "hands": {"Ana": [[1, 2], [3]], "Ben": 4, "Cy": 1}}, "hands.Ana[1]"),
    ({"act": "score", "hands": [1, 2, 3]}, "hands"),
])
def test_bad_actions_are_400_naming_the_field(hub, body, field):
    start_game(hub)
    before = state(hub)
    r = post(hub, "/api/actions", body)
    assert r.status_code == 400, r.json
    assert r.json["field"] == field
    assert state(hub) == before


def test_a_whole_round_from_the_page(hub):
    start_game(hub)
    for body in (
        {"act": "play", "player": "Ana", "tile": [12, 3], "train": "Ana"},
        {"act": "draw", "player": "Ben"},
        {"act": "pass", "player": "Ben"},
        {"act": "play", "player": "Cy", "tile": [12, 1], "train": "Ben"},
        {"act": "out", "player": "Cy"},
    ):
        assert post(hub, "/api/actions", body).status_code == 200, body
    game = state(hub)["game"]
    assert game["phase"] == "ended" and game["went_out"] == "Cy"
    r = post(hub, "/api/actions", {"act": "score", "hands": {"Ana": 21, "Ben": [[0, 0], [3, 4]]}})
    assert r.status_code == 200, r.json
    game = r.json["model"]["game"]
    assert game["rounds"] == [{"engine": 12, "scores": {"Ana": 21, "Ben": 57, "Cy": 0}, "went_out": "Cy"}]
    assert game["leaders"] == ["Cy"] and game["round"] == 11 and game["phase"] == "idle"


def test_blocked_needs_everyone_to_have_passed(hub):
    start_game(hub)
    r = post(hub, "/api/actions", {"act": "blocked"})
    assert r.status_code == 409 and r.json["code"] == "not-over"


def test_undo_takes_back_the_last_action_and_its_alerts(hub):
    start_game(hub)
    post(hub, "/api/actions", {"act": "play", "player": "Ana", "tile": [12, 3], "train": "Ana"})
    post(hub, "/api/actions", {"act": "play", "player": "Ben", "tile": [4, 9], "train": "Ben"})
    assert len(state(hub)["alerts"]) == 1
    assert post(hub, "/api/undo", pin="9999").status_code == 403
    r = post(hub, "/api/undo")
    assert r.status_code == 200
    assert r.json["undone"] == {"act": "play", "player": "Ana", "tile": [12, 3], "train": "Ana"}
    s = state(hub)
    assert s["alerts"] == [] and s["game"]["turn"] == "Ana" and s["game"]["trains"][0]["tiles"] == []
    post(hub, "/api/undo")  # the start
    r = post(hub, "/api/undo")
    assert r.status_code == 409 and r.json["error"] == "nothing-to-undo"


# ------------------------------------------------------------------ camera: questions, counts, status
def test_a_question_is_answered_once_with_one_of_its_choices(hub):
    closed = []
    sub = hub.bus.subscribe(lambda env: closed.append(env.event) if isinstance(env.event, QuestionClosed) else None,
                            "test")
    hub.bus.publish(Question(7, "Was that 7|11?", ("7|11", "7|12")))
    assert hub.live.drain()
    assert state(hub)["questions"] == [{"id": 7, "text": "Was that 7|11?", "choices": ["7|11", "7|12"],
                                         "typed": False}]
    assert post(hub, "/api/questions/7/answer", {"answer": "7|11"}, pin=None).status_code == 401
    r = post(hub, "/api/questions/7/answer", {"answer": "3|3"})
    assert r.status_code == 400 and r.json["field"] == "answer"
    assert post(hub, "/api/questions/7/answer", {"answer": 5}).json["field"] == "answer"
    assert post(hub, "/api/questions/7/answer", {"answer": "7|11"}).status_code == 200
    assert post(hub, "/api/questions/7/answer", {"answer": "7|11"}).status_code == 404
    assert sub.drain() and hub.live.drain()
    assert closed == [QuestionClosed(7, "7|11")]
    assert state(hub)["questions"] == []
    assert post(hub, "/api/questions/8/answer", {"answer": "x"}).status_code == 404
    sub.close()


def test_answers_go_to_whoever_asked_when_it_listens(hub):
    heard = []

    def reconciler_answer(question_id: int, answer: str) -> None:  # the camera's side, as hub.reconciler does it
        if answer == "nonsense":
            raise ValueError("'nonsense' is neither a choice nor a tile a|b")
        if question_id != 7:
            raise KeyError(question_id)
        heard.append((question_id, answer))
        hub.bus.publish(QuestionClosed(question_id, answer))

    app = create_app(hub.table, hub.bus, pin=PIN, answer_question=reconciler_answer)
    live = app.extensions["domino_hub"].live
    client = app.test_client()
    hub.bus.publish(Question(7, "Was that 7|11?", ("7|11", "7|12", "none of these")))
    hub.bus.publish(Question(8, "Who went first?", ("Ana", "Ben")))
    assert live.drain()
    answer = {"X-Table-Pin": PIN}
    r = client.post("/api/questions/7/answer", json={"answer": "nonsense"}, headers=answer)
    assert r.status_code == 400 and r.json["field"] == "answer"
    assert client.post("/api/questions/8/answer", json={"answer": "Ana"}, headers=answer).status_code == 404
    assert client.post("/api/questions/7/answer", json={"answer": "7|10"}, headers=answer).status_code == 200
    assert heard == [(7, "7|10")]  # a tile the camera did not offer is still the reconciler's to judge
    assert live.drain()
    assert [q["id"] for q in client.get("/api/state").json["questions"]] == [8]
    live.close()


def test_hand_counts_from_the_camera_are_offered_until_the_round_is_scored(hub):
    start_game(hub)
    post(hub, "/api/actions", {"act": "play", "player": "Ana", "tile": [12, 3], "train": "Ana"})
    post(hub, "/api/actions", {"act": "out", "player": "Ana"})
    hub.bus.publish(HandCounts({"Ben": 14, "Cy": 30}, {"Ben": 3, "Cy": 5}))
    assert hub.live.drain()
    assert state(hub)["counted"] == {"counts": {"Ben": 14, "Cy": 30}, "tiles": {"Ben": 3, "Cy": 5}}
    post(hub, "/api/actions", {"act": "score", "hands": {"Ben": 15, "Cy": 30}})
    assert hub.live.drain()
    assert state(hub)["counted"] is None


def test_camera_status_is_part_of_the_model(hub):
    hub.bus.publish(CameraStatus("knocked", "the hub moved"))
    assert hub.live.drain()
    assert state(hub)["camera"] == {"status": "knocked", "detail": "the hub moved"}


# ------------------------------------------------------------------ join
def test_join_page_and_qr_code_show_the_configured_address(hub):
    bus, table = hub.bus, hub.table
    app = create_app(table, bus, pin=PIN, join_url="http://10.0.0.7:8000/")
    client = app.test_client()
    assert "http://10.0.0.7:8000/" in client.get("/join").get_data(as_text=True)
    r = client.get("/qr.svg")
    assert r.mimetype == "image/svg+xml"
    assert r.data.startswith(b"<svg") and b"<title>http://10.0.0.7:8000/</title>" in r.data
    app.extensions["domino_hub"].live.close()


def test_join_address_is_the_one_the_phone_used(hub):
    html = hub.client.get("/join", base_url="http://192.168.4.1:8000").get_data(as_text=True)
    assert 'href="http://192.168.4.1:8000/"' in html
