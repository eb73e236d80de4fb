"""Redraw the README's phone screenshots: ``python -m web.screenshots [docs/images]``.

A simulated game is played through a real Table to a board worth showing, the page is
served as at a table, and Debian's Chromium (driven by Playwright, from the test extra)
photographs the scoreboard, the board with an illegal play, and the set-up page at 390x844.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from hub.bus import EventBus
from hub.events import CameraStatus
from hub.table import Table
from scorekeeper import MEXICAN, PRESETS, Play, Start, Tile
from scorekeeper.simulate import Simulator
from scorekeeper.store import Store

from .app import create_app
from .server import start_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PLAYERS = ["Ana", "Ben", "Cy", "Dee"]
SEED = 11


def stage(table: Table) -> Play:
    """Three scored rounds and a fourth under way; returns an illegal play for the turn's player."""
    table.new_game("classic", PLAYERS)
    sim = Simulator(PRESETS["classic"], PLAYERS, random.Random(SEED))
    for _ in range(3):
        for step in sim.round_steps():
            table.submit(step.action, source="camera")
    for step in sim.round_steps():
        table.submit(step.action, source="camera")
        state = table.state()
        laid = sum(len(t) for t in state.trains.values())
        if isinstance(step.action, Start) or state.phase != "playing" or state.turn is None:
            continue
        if state.markers and len(state.trains[MEXICAN]) >= 2 and laid >= 14:
            break
    state = table.state()
    player = state.turn
    end = state.ends[player]
    wrong = next(t for t in sim.hands[player] if not Tile.of(t.low, t.high).carries(end))
    return Play(player, (wrong.high, wrong.low), player)


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    out = Path(argv[0] if argv else "docs/images")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "shots.sqlite")
        bus = EventBus()
        table = Table(store, bus)
        illegal = stage(table)
        bus.publish(CameraStatus("ok"))
        app = create_app(table, bus, pin="0000", join_url="http://192.168.4.1:8000/")
        handle = start_server(app, "127.0.0.1", 0)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                           locale="en-GB").new_page()
                for name, path in (("scoreboard", "/"), ("setup", "/setup")):
                    page.goto(handle.url.rstrip("/") + path)
                    page.wait_for_selector("#live[data-state=live]")
                    page.screenshot(path=str(out / f"{name}.png"))
                page.goto(handle.url.rstrip("/") + "/board")
                page.wait_for_selector("#live[data-state=live]")
                table.submit(illegal, source="camera")
                page.wait_for_selector(".banner.alert")
                time.sleep(2.2)  # let the alert's pulse settle
                page.screenshot(path=str(out / "board.png"))
                browser.close()
        finally:
            handle.stop()
            store.close()
    print(f"wrote {', '.join(str(out / n) for n in ('scoreboard.png', 'board.png', 'setup.png'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
