"""Random legal games simulated per second, and the cost of judging one play."""

from __future__ import annotations

import argparse
import json
import platform
import random
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seconds", type=float, default=3.0, help="time spent simulating per preset")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from scorekeeper import PRESETS, Play, full_set
    from scorekeeper.simulate import Simulator, random_players

    report: dict = {"machine": platform.machine(), "python": platform.python_version(), "presets": {}}
    for name, rules in PRESETS.items():
        rng = random.Random(1)
        games = actions = 0
        start = time.perf_counter()
        while time.perf_counter() - start < args.seconds:
            n = rng.randint(rules.min_players, rules.max_players)
            sim = Simulator(rules, random_players(n), rng)
            actions += sum(1 for _ in sim.game_steps())
            games += 1
        elapsed = time.perf_counter() - start
        # the cost of one verdict: every tile on every train, at many mid-round positions
        sim = Simulator(rules, random_players(rules.min_players + 1), random.Random(2))
        tiles = full_set(rules.set)
        checks = 0
        check_time = 0.0
        for i, _step in enumerate(sim.game_steps(rounds=2)):
            if i % 7 or sim.game.phase != "playing":
                continue
            game = sim.game
            player = game.turn_player
            candidates = [Play(player, (t.low, t.high), tr) for t in tiles[::5] for tr in game.trains]
            t0 = time.perf_counter()
            for play in candidates:
                game.check(play)
            check_time += time.perf_counter() - t0
            checks += len(candidates)
        report["presets"][name] = {
            "games_per_s": round(games / elapsed, 1),
            "actions_per_s": round(actions / elapsed),
            "check_us": round(check_time / max(checks, 1) * 1e6, 2),
        }
    if args.json:
        print(json.dumps(report))
    else:
        print(f"rules engine on {report['machine']}, Python {report['python']}, one core")
        for name, r in report["presets"].items():
            print(
                f"  {name:11s} {r['games_per_s']:8.1f} whole games/s  {r['actions_per_s']:8d} actions/s"
                f"  {r['check_us']:6.2f} us per play check"
            )
    return 0

