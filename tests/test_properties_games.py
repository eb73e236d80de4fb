"""Property tests: thousands of random legal games, from deal to final score, checked after every action.

:class:`CheckedGame` drives the simulator and proves the invariants. Its checks are incremental
so that thousands of games fit the test budget: each play is checked against the train it
extends, and the whole board is re-walked when a round ends. Hypothesis picks the preset, the
set, the house rules, the player count and the seed; a seeded loop makes sure every preset meets
every player count it allows.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorekeeper import (
    MEXICAN,
    Blocked,
    Draw,
    Game,
    Out,
    Play,
    Rules,
    Score,
    Start,
    Tile,
    full_set,
    rules_from_spec,
    tablelog,
)
from scorekeeper.errors import Code
from scorekeeper.simulate import Simulator, random_players


@dataclass
class GameStats:
    """What one checked game covered, so the tests can show the runs were not vacuous."""

    actions: int = 0
    rounds: int = 0
    candidates: int = 0
    codes: set[Code] = field(default_factory=set)
    blocked: int = 0
    doubles: int = 0


class CheckedGame:
    """Drives a :class:`Simulator` and asserts every invariant of the issue after each action."""

    def __init__(self, rules: Rules, players: int, seed: int, extra_tiles: int = 3) -> None:
        self.rng = random.Random(seed)
        self.sim = Simulator(rules, random_players(players), self.rng, illegal_rate=0.05)
        self.game: Game = self.sim.game
        self.rules = rules
        self.extra_tiles = extra_tiles
        self.all_tiles = full_set(rules.set)
        self.trains = [*self.game.players, MEXICAN]
        self.stats = GameStats()
        self.totals = dict.fromkeys(self.game.players, 0)
        self.dealt: dict[str, int] = {}
        self.draws: dict[str, int] = {}
        self.plays: dict[str, int] = {}
        self.laid: set[Tile] = set()
        self._plays: dict[tuple[str, tuple[int, int], str], Play] = {}

    # ------------------------------------------------------------------ driving
    def run(self) -> GameStats:
        for step in self.sim.game_steps():
            if step.illegal is not None:
                error = self.game.check(step.action)
                assert error is not None and error.code == step.illegal
                continue
            self.stats.actions += 1
            self.after(step.action)
        assert self.game.game_over
        assert len(self.game.rounds) == len(self.rules.engines)
        assert self.game.next_round is None and self.game.phase == "idle"
        assert [r.engine for r in self.game.rounds] == list(self.rules.engines)
        return self.stats

    def after(self, action: Any) -> None:
        game = self.game
        if isinstance(action, Start):
            self._after_start(action)
        elif isinstance(action, Play):
            self._after_play(action)
        elif isinstance(action, Draw):
            self.draws[action.player] += 1
        elif isinstance(action, (Out, Blocked)):
            self.stats.blocked += isinstance(action, Blocked)
            self._check_board()
        elif isinstance(action, Score):
            self._after_score(action)
        if game.phase == "playing":
            self._check_hand_counts()
            self._check_agreement()

    # --------------------------------------------------------------- invariants
    def _after_start(self, start: Start) -> None:
        game = self.game
        assert start.engine == self.rules.engines[len(game.rounds)]
        assert all(not tiles for tiles in game.trains.values())
        assert game.on_table == {Tile(start.engine, start.engine)}
        assert not game.markers and not game.open_doubles
        self.dealt = dict(self.sim.dealt)
        self.draws = dict.fromkeys(game.players, 0)
        self.plays = dict.fromkeys(game.players, 0)
        self.laid = {Tile(start.engine, start.engine)}

    def _after_play(self, play: Play) -> None:
        """The train grew by exactly this tile, matched at its open end; the tile was not yet laid."""
        game = self.game
        tile = Tile.of(*play.tile)
        assert tile not in self.laid, f"{tile} laid twice"
        self.laid.add(tile)
        train = game.trains[play.train]
        placed = train[-1]
        before = train[-2].outer if len(train) > 1 else game.engine
        assert placed.tile == tile and placed.inner == before, (play, placed, before)
        assert game.on_table == self.laid
        self.plays[play.player] += 1
        self.stats.doubles += tile.is_double

    def _check_hand_counts(self) -> None:
        counts = self.game.hand_counts
        assert counts is not None
        for p in self.game.players:
            expected = self.dealt[p] + self.draws[p] - self.plays[p]
            assert counts[p] == expected == len(self.sim.hands[p]), (p, counts[p], expected)

    def _check_board(self) -> None:
        """Round over: every train is a matching chain from the engine, every tile is on the table
        at most once, and table + hands + boneyard is exactly the set."""
        game = self.game
        seen = [Tile(game.engine, game.engine)]  # type: ignore[arg-type]
        for tiles in game.trains.values():
            end = game.engine
            for placed in tiles:
                assert placed.inner == end
                end = placed.outer
                seen.append(placed.tile)
        assert len(seen) == len(set(seen)) == len(game.on_table)
        in_hands = [t for hand in self.sim.hands.values() for t in hand]
        everything = seen + in_hands + self.sim.boneyard
        assert sorted(everything) == self.all_tiles
        self._check_hand_counts()

    def _after_score(self, score: Score) -> None:
        game = self.game
        result = game.rounds[-1]
        expected = self._expected_scores(score.hands, result.went_out)
        assert dict(result.scores) == expected, (dict(result.scores), expected)
        for p, s in expected.items():
            self.totals[p] += s
        assert dict(game.state().scores) == self.totals
        best = (max if self.rules.positive_scoring else min)(self.totals.values())
        assert set(game.leaders()) == {p for p, t in self.totals.items() if t == best}
        self.stats.rounds += 1

    def _expected_scores(self, hands: Mapping[str, Any], went_out: str | None) -> dict[str, int]:
        """Scores worked out independently of the engine: pips left, double blank per the rules."""
        pips = dict.fromkeys(self.game.players, 0)
        for p, hand in hands.items():
            assert len(hand) == len(self.sim.hands[p])
            pips[p] = sum(self.rules.double_blank if a == b == 0 else a + b for a, b in hand)
        if went_out is not None:
            assert not self.sim.hands[went_out] and pips[went_out] == 0
        if not self.rules.positive_scoring:
            return pips
        scores = dict.fromkeys(self.game.players, 0)
        winner = went_out
        if winner is None:
            low = min(pips.values())
            lowest = [p for p, v in pips.items() if v == low]
            winner = lowest[0] if len(lowest) == 1 else None
        if winner is not None:
            scores[winner] = sum(v for p, v in pips.items() if p != winner)
        return scores

    # --------------------------------------------------- legal_plays versus check
    def _check_agreement(self) -> None:
        """For whoever may act now, legal_plays and check agree on every candidate play."""
        game = self.game
        actor = game.turn_player
        assert actor is not None
        self._agree(actor)
        nxt = game.players[(game.players.index(actor) + 1) % len(game.players)]
        if game.turn_plays and game.in_multi_first_turn(actor):
            self._agree(nxt)  # the next player may act now and end the multi-tile first turn
        else:
            assert game.legal_plays(self.sim.hands[nxt], nxt) == []
            if self.sim.hands[nxt]:
                tile = self.sim.hands[nxt][0]
                error = game.check(Play(nxt, (tile.low, tile.high), MEXICAN))
                assert error is not None and error.code == Code.NOT_YOUR_TURN
                self.stats.codes.add(error.code)

    def _agree(self, player: str) -> None:
        game, rng = self.game, self.rng
        tiles = list(self.sim.hands[player])
        tiles += rng.sample(self.all_tiles, self.extra_tiles)
        plays = game.legal_plays(tiles, player)
        legal = {(p.tile, p.train) for p in plays}
        assert all(p.player == player for p in plays)
        for tile in tiles:
            key = (tile.low, tile.high)
            pair = (tile.high, tile.low) if rng.random() < 0.5 else key
            for train in self.trains:
                error = game.check(self._play(player, pair, train))
                assert (error is None) == ((key, train) in legal), (player, tile, train, error, plays)
                if error is not None:
                    self.stats.codes.add(error.code)
        self.stats.candidates += len(tiles) * len(self.trains)
        usable = game.usable_trains(player)
        for (low, high), train in legal:
            if low != high:
                assert train in usable and usable[train] in (low, high)

    def _play(self, player: str, pair: tuple[int, int], train: str) -> Play:
        """Plays are values: build each candidate once per game, not once per check."""
        key = (player, pair, train)
        play = self._plays.get(key)
        if play is None:
            play = self._plays[key] = Play(player, pair, train)
        return play


# ------------------------------------------------------------------ the tests
PRESET_NAMES = ("classic", "dominos-cc", "cardinal")
HOUSE_RULES: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("close_doubles", ("order", "reverse")),
    ("positive_scoring", (False, True)),
    ("no_foreign_trains_first_turn", (False, True)),
    ("doubles", ("satisfy", "follow")),
    ("first_turn", ("one", "many")),
    ("double_blank", (0, 25, 50)),
)


@st.composite
def games(draw: st.DrawFn, sets: tuple[int, ...]) -> tuple[dict[str, Any], int, int]:
    """A rules spec (a preset, a set size and any house rules), a player count it allows, and a seed."""
    spec: dict[str, Any] = {"preset": draw(st.sampled_from(PRESET_NAMES))}
    size = draw(st.sampled_from(sets))
    if size != 12:
        spec["set"] = size
    for key, values in HOUSE_RULES:
        if draw(st.booleans()):
            spec[key] = draw(st.sampled_from(values))
    rules = rules_from_spec(spec)
    players = draw(st.integers(rules.min_players, rules.max_players))
    return spec, players, draw(st.integers(0, 2**32 - 1))


PROPERTY_SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)


@pytest.mark.slow
@settings(PROPERTY_SETTINGS, max_examples=2000)
@given(games(sets=(6,)))
def test_thousands_of_compact_games(case: tuple[dict[str, Any], int, int]) -> None:
    """Double-6 games are short, so hypothesis can play thousands of them with every check on."""
    spec, players, seed = case
    stats = CheckedGame(rules_from_spec(spec), players, seed).run()
    assert stats.rounds == len(rules_from_spec(spec).engines)


@settings(PROPERTY_SETTINGS, max_examples=40)
@given(games(sets=(9, 12)))
def test_full_size_games_with_house_rules(case: tuple[dict[str, Any], int, int]) -> None:
    spec, players, seed = case
    rules = rules_from_spec(spec)
    stats = CheckedGame(rules, players, seed).run()
    assert stats.rounds == len(rules.engines) and stats.candidates > stats.actions


def preset_player_counts() -> list[tuple[Any, int]]:
    """Every preset at every player count it allows, double-9 classic included."""
    out = []
    for spec in (*PRESET_NAMES, {"preset": "classic", "set": 9}):
        rules = rules_from_spec(spec)
        out += [(spec, n) for n in range(rules.min_players, rules.max_players + 1)]
    return out


@pytest.mark.parametrize(("spec", "players"), preset_player_counts(), ids=str)
def test_every_preset_and_player_count(spec: Any, players: int) -> None:
    """A whole game per preset and player count; its table log then replays through the checker."""
    checked = CheckedGame(rules_from_spec(spec), players, seed=players)
    stats = checked.run()
    assert stats.rounds == len(checked.rules.engines) and stats.doubles > 0
    log = tablelog.loads(json.dumps(tablelog.log_of(checked.game, spec).to_json()))
    results = tablelog.check(log)
    assert len(results) == len(checked.game.history)
    assert all(r.error is None and not r.mismatch for r in results)


@pytest.mark.parametrize("size", [15, 18])
def test_big_sets(size: int) -> None:
    checked = CheckedGame(rules_from_spec({"preset": "classic", "set": size}), 4, seed=size)
    assert checked.run().rounds == size + 1


def test_the_checks_see_every_kind_of_verdict() -> None:
    """The candidates are not all trivially illegal: a few games reach every play verdict."""
    codes: set[Code] = set()
    blocked = 0
    for seed in range(30):
        spec = {"preset": "classic", "set": 6, "no_foreign_trains_first_turn": seed % 2 == 0}
        stats = CheckedGame(rules_from_spec(spec), 2 + seed % 3, seed).run()
        codes |= stats.codes
        blocked += stats.blocked
    assert codes >= {Code.NOT_YOUR_TURN, Code.DUPLICATE_TILE, Code.OPEN_DOUBLE, Code.TRAIN_CLOSED, Code.NO_MATCH}
    assert blocked > 0


@settings(PROPERTY_SETTINGS, max_examples=60)
@given(games(sets=(6, 9)), st.integers(0, 2**32 - 1))
def test_a_play_with_no_room_is_never_made(case: tuple[dict[str, Any], int, int], salt: int) -> None:
    """A filmed game asks whether each play has room on the table. A crowded play is never made,
    legal or illegal; the player draws or passes instead, every round still ends, and every step is
    judged as the simulator says."""
    spec, players, seed = case
    crowded = {(t, train) for t in range(19) for train in ("mexican", "Ana", "Ben") if (t * 7 + salt) % 3 == 0}
    asked: list[Play] = []

    def room(play: Play) -> bool:
        asked.append(play)
        return (play.tile[0], play.train) not in crowded and (play.tile[1], play.train) not in crowded

    rules = rules_from_spec(spec)
    sim = Simulator(rules, random_players(players), random.Random(seed), illegal_rate=0.1, room=room)
    replay = Game(rules, sim.game.players)
    for step in sim.game_steps():
        if isinstance(step.action, Play):
            assert room(step.action), f"{step.action} was made with no room"
        error = replay.check(step.action)
        assert (None if error is None else error.code) == step.illegal
        if error is None:
            replay.push(step.action)
    assert asked and sim.game.game_over
