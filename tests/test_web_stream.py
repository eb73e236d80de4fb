"""``/events`` through the real server (waitress): live delivery, catch-up, limits and shutdown."""

from __future__ import annotations

import http.client
import json
import socket
import time
from types import SimpleNamespace

import pytest

from hub.bus import EventBus
from hub.events import CameraStatus
from hub.table import Table
from scorekeeper import Pass, Play, Start
from scorekeeper.store import Store
from web.app import create_app
from web.live import Live
from web.server import start_server


class Stream:
    """A minimal EventSource: reads ``id``/``event``/``data`` blocks off one open response."""

    def __init__(self, port: int, last_event_id: str | None = None, timeout: float = 5.0) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        self.conn.request("GET", "/events", headers=headers)
        self.response = self.conn.getresponse()
        self.comments: list[str] = []

    def next(self) -> SimpleNamespace:
        fields: dict[str, str] = {}
        while True:
            line = self.response.readline().decode()
            if not line:
                raise EOFError("the stream ended")
            line = line.rstrip("\n")
            if line == "":
                if "data" in fields:
                    data = json.loads(fields["data"])
                    return SimpleNamespace(id=fields.get("id"), event=fields.get("event"), data=data)
                continue
            if line.startswith(":"):
                self.comments.append(line)
                continue
            key, _, value = line.partition(": ")
            fields[key] = value

    def close(self) -> None:
        self.response.close()
        self.conn.close()


@pytest.fixture
def served():
    bus = EventBus()
    store = Store(":memory:")
    table = Table(store, bus)
    table.new_game("classic", ["Ana", "Ben", "Cy"])
    table.submit(Start(12, "Ana"), "test")
    app = create_app(table, bus, pin="1", heartbeat_s=0.3, max_streams=3)
    handle = start_server(app, "127.0.0.1", 0)
    yield SimpleNamespace(bus=bus, table=table, app=app, handle=handle,
                          live=app.extensions["domino_hub"].live)
    handle.stop()
    store.close()


def test_a_new_stream_starts_with_the_whole_model(served):
    s = Stream(served.handle.port)
    assert s.response.status == 200
    assert s.response.getheader("Content-Type").startswith("text/event-stream")
    first = s.next()
    assert first.event == "state"
    assert first.data["model"]["game"]["engine"] == 12
    assert first.id.endswith(f"-{served.bus.last_id}")
    s.close()


def test_a_play_reaches_an_open_stream_within_a_second(served):
    s = Stream(served.handle.port)
    s.next()
    sent = time.monotonic()
    served.table.submit(Play("Ana", (12, 4), "Ana"), "camera")
    update = s.next()
    assert time.monotonic() - sent < 1.0
    assert update.event == "update"
    assert update.data["event"]["type"] == "applied" and update.data["event"]["source"] == "camera"
    assert update.data["model"]["game"]["trains"][0]["tiles"] == [[12, 4]]
    assert update.data["model"]["game"]["turn"] == "Ben"
    s.close()


def test_an_illegal_play_and_its_clearing_reach_the_stream(served):
    s = Stream(served.handle.port)
    s.next()
    verdict = served.table.submit(Play("Ana", (4, 9), "Ben"), "camera")
    alert = s.next().data
    assert alert["event"]["type"] == "illegal"
    assert alert["event"]["alert"]["player"] == "Ana" and alert["event"]["alert"]["tile"] == [4, 9]
    assert alert["model"]["alerts"][0]["code"] == verdict.alert.code
    served.table.clear_alert(verdict.alert.id)
    cleared = s.next().data
    assert cleared["event"] == {"type": "alert-cleared", "id": verdict.alert.id, "reason": "taken-back"}
    assert cleared["model"]["alerts"] == []
    s.close()


def test_idle_streams_get_a_heartbeat(served):
    s = Stream(served.handle.port)
    s.next()
    served.table.submit(Play("Ana", (12, 4), "Ana"), "camera")  # arrives after at least one 0.3 s ping
    time.sleep(0.5)
    served.table.submit(Play("Ben", (12, 3), "Ben"), "camera")
    s.next()
    s.next()
    assert ": ping" in s.comments
    s.close()


def test_a_phone_that_comes_back_gets_exactly_what_it_missed(served):
    s = Stream(served.handle.port)
    last = s.next().id
    s.close()
    served.table.submit(Play("Ana", (12, 4), "Ana"), "camera")
    served.table.submit(Play("Ben", (4, 9), "Ben"), "camera")  # illegal: an alert
    served.bus.publish(CameraStatus("knocked"))
    served.table.submit(Pass("Ben"), "button")
    assert served.live.drain()
    back = Stream(served.handle.port, last_event_id=last)
    missed = [back.next() for _ in range(4)]
    assert [m.event for m in missed] == ["update"] * 4
    assert [m.data["event"]["type"] for m in missed] == ["applied", "illegal", "camera", "applied"]
    ids = [int(m.id.rsplit("-", 1)[1]) for m in missed]
    assert ids == list(range(int(last.rsplit("-", 1)[1]) + 1, served.bus.last_id + 1))
    served.table.submit(Play("Cy", (12, 1), "Cy"), "camera")
    live = back.next()
    assert live.data["event"]["type"] == "applied" and live.data["model"]["game"]["turn"] == "Ana"
    back.close()


def test_a_phone_that_is_up_to_date_gets_nothing_but_new_events(served):
    s = Stream(served.handle.port)
    last = s.next().id
    s.close()
    back = Stream(served.handle.port, last_event_id=last)
    served.table.submit(Play("Ana", (12, 4), "Ana"), "camera")
    assert back.next().data["event"]["type"] == "applied"
    back.close()


@pytest.mark.parametrize("last_event_id", ["someone-else-12", "garbage", "0", f"{'x' * 8}-1"])
def test_an_id_from_another_run_of_the_hub_gets_the_whole_model(served, last_event_id):
    s = Stream(served.handle.port, last_event_id=last_event_id)
    assert s.next().event == "state"
    s.close()


def test_a_phone_away_too_long_gets_the_whole_model():
    bus = EventBus(history=3)
    store = Store(":memory:")
    table = Table(store, bus)
    table.new_game("classic", ["Ana", "Ben"])
    live = Live(table, bus)
    first = next(iter(live.open_stream(None)))  # HELLO
    assert first.startswith(b"retry:")
    last = f"{live.epoch}-{bus.last_id}"
    for _ in range(5):
        bus.publish(CameraStatus("ok"))
    assert live.drain()
    assert bus.since(int(last.rsplit("-", 1)[1])) is None
    stream = live.open_stream(last)
    assert next(stream).startswith(b"retry:")
    assert b"event: state" in next(stream)
    live.close()
    store.close()


def test_too_many_phones_get_a_503_and_retry(served):
    streams = [Stream(served.handle.port) for _ in range(3)]
    for s in streams:
        s.next()
    conn = http.client.HTTPConnection("127.0.0.1", served.handle.port, timeout=5)
    conn.request("GET", "/events")
    r = conn.getresponse()
    assert r.status == 503 and r.getheader("Retry-After") == "5"
    assert json.loads(r.read())["error"] == "busy"
    conn.close()
    streams[0].close()
    served.table.submit(Play("Ana", (12, 4), "Ana"), "camera")  # the closed stream notices on its next write
    deadline = time.monotonic() + 3
    while served.live.open_streams > 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert served.live.open_streams == 2
    for s in streams[1:]:
        s.close()


def test_a_stream_that_stops_reading_is_dropped_without_holding_up_the_others():
    bus = EventBus()
    store = Store(":memory:")
    table = Table(store, bus)
    table.new_game("classic", ["Ana", "Ben"])
    live = Live(table, bus, client_queue=4)
    stuck = live.open_stream(None)
    for _ in range(10):
        bus.publish(CameraStatus("ok"))
    assert live.drain()
    chunks = list(stuck)  # it ends by itself: the browser would reconnect with Last-Event-ID
    assert chunks[0].startswith(b"retry:") and b"event: state" in chunks[1]
    assert live.dropped_streams == 1 and live.open_streams == 0
    live.close()
    store.close()


def test_stopping_the_server_ends_open_streams_at_once(served):
    s = Stream(served.handle.port)
    s.next()
    started = time.monotonic()
    served.handle.stop()
    with pytest.raises((EOFError, ConnectionError, http.client.IncompleteRead, socket.timeout)):
        s.next()
    assert time.monotonic() - started < 3
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", served.handle.port), timeout=1).close()
