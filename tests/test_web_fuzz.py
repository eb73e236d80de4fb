"""Random requests against the JSON API: never a 500, never a change that is half made."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.bus import EventBus
from hub.table import Table
from scorekeeper import Start
from scorekeeper.store import Store
from web.app import create_app

PIN = "1357"
PLAYERS = ["Ana", "Ben", "Cy"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 20), st.integers(), st.floats(allow_nan=True),
    st.sampled_from(PLAYERS + ["mexican", "", " ", "Zed", "classic", "cardinal", "dominos-cc", "play", "score"]),
    st.text(max_size=30),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from([*PLAYERS, "2", "x", "preset", "set"]) | st.text(max_size=5), inner,
                        max_size=4),
    ),
    max_leaves=12,
)
tiles = st.lists(st.integers(-1, 20), min_size=0, max_size=3)
KEYS = [
    "act", "player", "tile", "train", "engine", "first", "hands", "players", "rules", "answer",
    "preset", "set", "engines", "hand_sizes", "doubles", "positive_scoring", "min_players",
]
bodies = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"act": st.sampled_from(["play", "draw", "pass", "out", "blocked", "start", "score", "fly"])},
        optional={
            "player": st.sampled_from(PLAYERS) | json_values,
            "tile": tiles | json_values,
            "train": st.sampled_from([*PLAYERS, "mexican"]) | json_values,
            "engine": st.integers(-1, 20) | json_values,
            "first": st.sampled_from(PLAYERS) | json_values,
            "hands": st.dictionaries(st.sampled_from([*PLAYERS, "Zed"]),
                                     st.integers(-1, 200) | st.lists(tiles, max_size=3)),
        },
    ),
    st.fixed_dictionaries(
        {"players": st.lists(st.sampled_from(PLAYERS + ["Dee", "mexican", ""]) | json_values, max_size=11)},
        optional={"rules": st.sampled_from(["classic", "cardinal", "dominos-cc", "nope"]) | st.dictionaries(
            st.sampled_from(KEYS[9:] + ["first_player", "close_doubles", "double_blank", "max_players"]), json_values,
            max_size=4,
        )},
    ),
    st.dictionaries(st.sampled_from(KEYS), json_values, max_size=5),
)
PATHS = ["/api/game", "/api/actions", "/api/undo", "/api/game/end", "/api/pin",
         "/api/alerts/1/dismiss", "/api/questions/1/answer"]
requests = st.tuples(
    st.sampled_from(PATHS),
    st.one_of(bodies.map(lambda b: json.dumps(b).encode()), st.binary(max_size=40)),
    st.sampled_from([PIN, PIN, PIN, None, "0000"]),
)


def consistent(table: Table) -> bool:
    """The live game is exactly the stored actions replayed: nothing was half applied."""
    if table.game_id is None:
        return True
    return table.store.load(table.game_id).replay().state() == table.state()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(started=st.booleans(), sequence=st.lists(requests, min_size=1, max_size=6))
def test_random_requests_never_fail_the_server(started, sequence):
    bus = EventBus()
    store = Store(":memory:")
    table = Table(store, bus)
    if started:
        table.new_game("classic", PLAYERS)
        table.submit(Start(12, "Ana"), "test")
    app = create_app(table, bus, pin=PIN)
    client = app.test_client()
    try:
        for path, raw, pin in sequence:
            headers = {"X-Table-Pin": pin} if pin else {}
            r = client.post(path, data=raw, content_type="application/json", headers=headers)
            assert r.status_code < 500, (path, raw, r.get_data(as_text=True))
            body = r.json
            assert body is not None and ("error" in body) == (r.status_code >= 400)
            if r.status_code == 400:
                assert body["field"], body
            assert consistent(table)
            state = client.get("/api/state")
            assert state.status_code == 200 and set(state.json) == {"game", "alerts", "camera", "questions", "counted"}
        for path in ("/api/games", "/api/games/1"):
            assert client.get(path).status_code in (200, 404)
    finally:
        app.extensions["domino_hub"].live.close()
        store.close()
