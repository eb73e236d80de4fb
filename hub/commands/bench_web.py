"""Phones on the page: the delay from an action to its arrival on every open /events stream.

The hub runs here as it does at a table (waitress, a real SQLite file, the bus); the phones
are threads in a second process on loopback, each with its own stream, so they do not share
the server's interpreter lock. Simulated players act at ``--rate`` actions a second, with an
illegal play now and then. For every action the clock starts before the Table judges it and
stops when a phone has read it off its stream. Target: p95 under 300 ms, no phone dropped.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from typing import Any

TARGET_P95_S = 0.300


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--clients", type=int, default=30, help="phones holding a stream (default 30)")
    p.add_argument("--seconds", type=float, default=60.0, help="how long the plays go on (default 60)")
    p.add_argument("--rate", type=float, default=5.0, help="actions a second from the table (default 5)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _phone(port: int, index: int, stop: Any, out: list[dict[str, Any]], ready: Any) -> None:
    """One phone: read the stream until the hub closes it; note when each action arrived."""
    import http.client

    arrived: dict[str, float] = {}
    ended_early = False
    error = None
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/events", headers={"Accept": "text/event-stream"})
        response = conn.getresponse()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}")
        data = ""
        while True:
            line = response.readline()
            now = time.time()
            if not line:
                ended_early = not stop.is_set()
                break
            text = line.decode().rstrip("\n")
            if text.startswith("data: "):
                data = text[6:]
            elif text == "" and data:
                message = json.loads(data)
                data = ""
                event = message.get("event") or {}
                if "model" in message and not event:
                    ready.release()  # the first message: the whole model
                elif event.get("type") == "applied":
                    arrived[f"a{event['game_id']}-{event['seq']}"] = now
                elif event.get("type") == "illegal":
                    arrived[f"x{event['alert']['id']}"] = now
        response.close()
        conn.close()
    except Exception as e:  # noqa: BLE001 - any failure is a dropped phone, reported as such
        error = f"{type(e).__name__}: {e}"
    out.append({"index": index, "arrived": arrived, "ended_early": ended_early, "error": error})


def _phones_main(port: int, clients: int, stop: Any, results: Any, ready: Any) -> None:
    """The second process: ``clients`` phones, reported back once the hub has closed their streams."""
    import threading

    out: list[dict[str, Any]] = []
    threads = [threading.Thread(target=_phone, args=(port, i, stop, out, ready), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    results.put(out)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def run(args: argparse.Namespace) -> int:
    import multiprocessing
    import tempfile
    from pathlib import Path

    from hub.bus import EventBus
    from hub.table import Table
    from scorekeeper import PRESETS
    from scorekeeper.simulate import Simulator, random_players
    from scorekeeper.store import Store
    from web.app import create_app
    from web.server import start_server

    if args.clients < 1 or args.seconds <= 0 or args.rate <= 0:
        print("domino-hub bench web: --clients, --seconds and --rate must be positive")
        return 2
    tmp = tempfile.TemporaryDirectory(prefix="domino-hub-bench-")
    store = Store(Path(tmp.name) / "bench.sqlite")
    bus = EventBus()
    table = Table(store, bus)
    app = create_app(table, bus, pin="0000", max_streams=args.clients + 8)
    handle = start_server(app, "127.0.0.1", 0)
    ctx = multiprocessing.get_context("spawn")
    stop, ready, results = ctx.Event(), ctx.Semaphore(0), ctx.Queue()
    phones = ctx.Process(target=_phones_main, args=(handle.port, args.clients, stop, results, ready), daemon=True)
    phones.start()
    sent: dict[str, float] = {}
    try:
        deadline = time.monotonic() + 60
        for _ in range(args.clients):
            if not ready.acquire(timeout=max(0.1, deadline - time.monotonic())):
                print("domino-hub bench web: the phones did not all connect within 60 s")
                return 2
        rng = random.Random(args.seed)
        end = time.monotonic() + args.seconds
        gap = 1.0 / args.rate
        while time.monotonic() < end:
            players = random_players(4)
            table.new_game("classic", players)
            sim = Simulator(PRESETS["classic"], players, rng, illegal_rate=0.05)
            for step in sim.game_steps():
                if time.monotonic() >= end:
                    break
                started = time.time()
                verdict = table.submit(step.action, source="bench")
                if verdict.alert is not None:
                    sent[f"x{verdict.alert.id}"] = started
                    table.clear_alert(verdict.alert.id)
                elif verdict.seq is not None:
                    sent[f"a{table.game_id}-{verdict.seq}"] = started
                time.sleep(rng.uniform(0.5, 1.5) * gap)
        time.sleep(1.0)  # the last actions reach every phone
    finally:
        stop.set()
        dropped_server_side = app.extensions["domino_hub"].live.dropped_streams
        handle.stop()
    phone_reports = results.get(timeout=60)
    phones.join(timeout=10)
    store.close()
    tmp.cleanup()

    delays: list[float] = []
    dropped = []
    worst_p95 = 0.0
    for phone in phone_reports:
        mine = [phone["arrived"][k] - t for k, t in sent.items() if k in phone["arrived"]]
        missed = sum(1 for k in sent if k not in phone["arrived"])
        if phone["error"] or phone["ended_early"] or missed:
            dropped.append({"phone": phone["index"], "error": phone["error"], "missed": missed})
        delays += mine
        worst_p95 = max(worst_p95, _percentile(mine, 95) if mine else 0.0)
    report = {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "clients": args.clients,
        "seconds": args.seconds,
        "actions": len(sent),
        "deliveries": len(delays),
        "expected_deliveries": len(sent) * args.clients,
        "p50_ms": round(_percentile(delays, 50) * 1000, 1),
        "p95_ms": round(_percentile(delays, 95) * 1000, 1),
        "p99_ms": round(_percentile(delays, 99) * 1000, 1),
        "max_ms": round(max(delays, default=float("nan")) * 1000, 1),
        "worst_phone_p95_ms": round(worst_p95 * 1000, 1),
        "dropped": dropped,
        "dropped_server_side": dropped_server_side,
        "reports": len(phone_reports),
    }
    ok = report["p95_ms"] < TARGET_P95_S * 1000 and not dropped and len(phone_reports) == args.clients
    report["target_met"] = ok
    if args.json:
        print(json.dumps(report))
    else:
        print(f"web page on {report['machine']}, Python {report['python']}: {args.clients} phones on loopback, "
              f"{report['actions']} actions in {args.seconds:g} s")
        print(f"  delay from action to phone: p50 {report['p50_ms']} ms, p95 {report['p95_ms']} ms, "
              f"p99 {report['p99_ms']} ms, max {report['max_ms']} ms "
              f"(worst phone's p95 {report['worst_phone_p95_ms']} ms)")
        print(f"  delivered {report['deliveries']} of {report['expected_deliveries']}; "
              f"dropped phones: {len(dropped)}{' ' + json.dumps(dropped) if dropped else ''}")
        print(f"  target p95 < {TARGET_P95_S * 1000:.0f} ms and none dropped: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1
