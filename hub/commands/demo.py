"""``domino-hub demo``: a simulated evening. Until the hub lands it plays games through the rules engine."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run the hub on a simulated table")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--speed", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3, help="rounds to play before stopping")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import random

    from scorekeeper import preset
    from scorekeeper.simulate import Simulator

    sim = Simulator(preset("classic"), ["Ana", "Ben", "Cy", "Dee"], random.Random(args.seed), illegal_rate=0.05)
    for step in sim.game_steps(rounds=args.rounds):
        if step.illegal:
            error = sim.game.check(step.action)
            print(f"  ILLEGAL {step.action.player}: {error.message if error else step.illegal.value}")
        elif step.action.act == "score":
            r = sim.game.rounds[-1]
            print(f"round {r.engine}|{r.engine}: " + ", ".join(f"{p} {s}" for p, s in r.scores.items()))
    totals = sim.game.totals()
    print("totals: " + ", ".join(f"{p} {totals[p]}" for p in sim.game.players))
    print("leading: " + ", ".join(sim.game.leaders()))
    return 0
