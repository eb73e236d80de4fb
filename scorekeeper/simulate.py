"""Random players for whole games: the demo, the renderer, the benchmarks and the property tests.

The simulator knows the hands and the boneyard, which the engine never sees, and plays
only what the engine calls legal. It can also try an illegal play now and then and take
it back, as real players do.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .actions import MEXICAN, Action, Blocked, Draw, Out, Pass, Play, Score, Start
from .errors import Code
from .game import Game
from .rules import Rules
from .tiles import Tile, full_set


@dataclass(frozen=True)
class SimStep:
    """One action as the table saw it; ``illegal`` is set for an attempt that was taken back."""

    action: Action
    illegal: Code | None = None


class Simulator:
    """Plays rounds of a game between random legal players, one action at a time."""

    def __init__(
        self,
        rules: Rules,
        players: Sequence[str],
        rng: random.Random,
        illegal_rate: float = 0.0,
        room: Callable[[Play], bool] | None = None,
    ) -> None:
        self.game = Game(rules, players)
        self.rng = rng
        self.illegal_rate = illegal_rate
        self.room = room  # whether a play has room on the table (a filmed game): players avoid crowded spots
        self.hands: dict[str, list[Tile]] = {p: [] for p in players}
        self.boneyard: list[Tile] = []
        self.dealt: dict[str, int] = {}
        self.draws: dict[str, int] = {}
        self.plays: dict[str, int] = {}

    @property
    def rules(self) -> Rules:
        return self.game.rules

    def _push(self, action: Action) -> SimStep:
        self.game.push(action)
        return SimStep(action)

    def deal(self) -> Start:
        """Shuffle, deal and choose the first player for the next round."""
        game, rules, rng = self.game, self.rules, self.rng
        engine = game.next_round
        assert engine is not None, "the game is over"
        n = len(game.players)
        tiles = full_set(rules.set)
        rng.shuffle(tiles)
        double = Tile(engine, engine)
        size = rules.hand_size(n)
        first: str | None = None
        if rules.first_player == "engine-holder":
            hands = {p: tiles[i * size:(i + 1) * size] for i, p in enumerate(game.players)}
            rest = tiles[n * size:]
            for p, hand in hands.items():
                if double in hand:
                    hand.remove(double)
                    first = p
            if first is None:
                rest.remove(double)
        else:
            tiles.remove(double)
            hands = {p: tiles[i * size:(i + 1) * size] for i, p in enumerate(game.players)}
            rest = tiles[n * size:]
        if first is None:
            first = (
                game.players[len(game.rounds) % n] if rules.first_player == "rotate" else rng.choice(game.players)
            )
        self.hands = {p: list(h) for p, h in hands.items()}
        self.boneyard = rest
        self.dealt = {p: len(h) for p, h in hands.items()}
        self.draws = dict.fromkeys(game.players, 0)
        self.plays = dict.fromkeys(game.players, 0)
        return Start(engine, first, dict(self.dealt))

    def round_steps(self, max_actions: int = 10_000) -> Iterator[SimStep]:
        """Play one round from the deal to its score, yielding every step once it is judged."""
        game = self.game
        yield self._push(self.deal())
        actor = game.turn_player
        played_this_turn = 0
        for _ in range(max_actions):
            assert actor is not None
            hand = self.hands[actor]
            if self.illegal_rate and self.rng.random() < self.illegal_rate:
                attempt = self._illegal_attempt(actor)
                if attempt is not None:
                    yield attempt
            # a tile with no room on the table is not played: the player draws or passes instead
            legal = self._roomy(game.legal_plays(hand, actor))
            if legal:
                play = self.rng.choice(legal)
                tile = Tile.of(*play.tile)
                hand.remove(tile)
                self.plays[actor] += 1
                yield self._push(play)
                played_this_turn += 1
                if not hand:
                    yield self._push(Out(actor))
                    yield self._push(self._score())
                    return
            elif game.in_multi_first_turn(actor) and played_this_turn and game.turn_player == actor:
                actor = game.players[(game.players.index(actor) + 1) % len(game.players)]
                played_this_turn = 0
                continue
            elif self.boneyard and not (game.drew and game.turn_player == actor):
                hand.append(self.boneyard.pop())
                self.draws[actor] += 1
                yield self._push(Draw(actor))
            else:
                yield self._push(Pass(actor))
                if not self.boneyard and len(game.passed) == len(game.players):
                    yield self._push(Blocked())
                    yield self._push(self._score())
                    return
            if game.turn_player != actor:
                actor = game.turn_player
                played_this_turn = 0
        raise RuntimeError("round did not finish")  # pragma: no cover - a bug guard, not a rule

    def _roomy(self, plays: list[Play]) -> list[Play]:
        """The plays that have room on the table (all of them when nobody asks)."""
        room = self.room
        return plays if room is None else [p for p in plays if room(p)]

    def _score(self) -> Score:
        went_out = self.game.went_out
        return Score({p: tuple((t.low, t.high) for t in h) for p, h in self.hands.items() if p != went_out})

    def _illegal_attempt(self, actor: str) -> SimStep | None:
        """A tile from the hand laid somewhere the rules forbid (and where it has room), judged and taken back."""
        if not self.hands[actor]:
            return None
        tile = self.rng.choice(self.hands[actor])
        trains = [*self.game.players, MEXICAN]
        self.rng.shuffle(trains)
        wrong: dict[Play, Code] = {}
        for train in trains:
            play = Play(actor, (tile.high, tile.low), train)
            error = self.game.check(play)
            if error is not None:
                wrong[play] = error.code
        roomy = self._roomy(list(wrong))
        return SimStep(roomy[0], wrong[roomy[0]]) if roomy else None

    def game_steps(self, rounds: int | None = None) -> Iterator[SimStep]:
        """Every round of the game (or the first ``rounds``), in order."""
        played = 0
        while not self.game.game_over and (rounds is None or played < rounds):
            yield from self.round_steps()
            played += 1


def random_players(n: int) -> list[str]:
    names = ["Ana", "Ben", "Cy", "Dee", "Eli", "Fay", "Gus", "Hal", "Ivy", "Jo"]
    return names[:n]
