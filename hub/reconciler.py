"""From the board the camera sees to table-log actions the rules engine judges.

The camera's pip readings are probabilities, and the game knows a lot the camera does
not (LiveChess2FEN's idea for chess): a new tile lies at a train's open end, so a legal
one carries that end; every tile exists once, so nothing already on the table can be
played; the engine of the next round is known. Each reading is scored as

    P(tile | pixels) x prior(tile),   prior = 1 for a legal play, ``illegal_prior`` otherwise,

over every tile still off the table. The best is recorded when its share of the total is
at least ``accept``; otherwise the phones are asked ("Was that 7|11?") and the game waits
for the answer, because a guessed tile would mislead every later verdict. A reading that
only an illegal tile explains is judged illegal (a surer reading is needed for that: a
false alarm spoils the evening more than a question): the table is alerted, and the alert
clears when the tile is taken back. The camera alerts on its own only where the fault is
the tile's: where every reading is illegal on that train the shares above no longer say
anything about the place, and a tile that carries the train's end but is illegal only for
whose turn the hub counts it is (train closed, not your turn) is just what a play after
one the camera missed looks like, so that is asked ("..., laid by Ana?"), never alerted.
"Someone else laid it" then asks what Ana did lay (below), and the tile is judged again.
A tile the detector took for a back (``SeenTile.face_down``) is always asked about: its
reading is only a guess, and a back that happens to lie by a train's end is no play.
A tile seen only by weak looks at a train's end (``SeenTile.sure`` False) is never asked about:
recorded once its reading is sure, it is otherwise left to be judged again each frame. A
train's marker set down at its end is boxed so, and read as a blank tile now and then; asked,
the table had to answer "none of these" about it (eval-hub seeds 5000 and 5006: four of 10
questions). A real tile seen so and never read surely is caught by the turn it holds up
(below), like any tile the camera missed.

A draw or pass pressed out of turn by the hub's count is the other sign of a missed play
(and so is going out when the hub has not seen the last tile). The press waits
(``Table.hold_presses``), is judged again once the camera records what it saw, and when
it still waits the table is asked what the turn's player laid, with the tiles lying
unrecorded past the trains' ends offered first. "Nothing was missed" makes it the
out-of-turn press it looked like, and only then does it alert.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from scorekeeper import MEXICAN, Action, Play, Score, Start, Tile, full_set
from scorekeeper.errors import Code
from scorekeeper.game import Game, replay, train_label

from .calibration import Calibration
from .events import Alert, HandCounts, Question, QuestionClosed
from .geometry import Quad
from .table import Table, Verdict
from .tracker import Board, BoardChange, SeenTile, Tracker, covered_share

log = logging.getLogger(__name__)

NONE_OF_THESE = "none of these"
NOTHING_MISSED = "nothing was missed"  # the press that waited was out of turn after all
SOMEONE_ELSE = "someone else laid it"  # a tile's layer was not the turn's player: the camera missed a turn
# faults that come from whose turn the hub counts it is, not from the tile: a missed play, draw or pass
# (a tile the camera never saw, a button not pressed) makes the next legal play look like one of them
TURN_FAULTS = frozenset({Code.NOT_YOUR_TURN, Code.TRAIN_CLOSED, Code.OPEN_DOUBLE})


@dataclass(frozen=True)
class ReconcilerSettings:
    accept: float = 0.9  # a reading's share of all readings needed to record it without asking
    alert_accept: float = 0.95  # the same for an illegal reading: a false alarm costs more than a question
    elsewhere_prior: float = 0.05  # a tile laid on another train whose end it also touches, against the one
    # it fits best: as unlikely as an illegal play, so "legal there or illegal here" is asked, not guessed
    illegal_prior: float = 0.05  # an illegal play is this much less likely than a legal one, before looking
    choices: int = 3  # readings offered in a question
    missed_grace_s: float = 1.0  # a press out of turn by the hub's count waits this long for the camera to
    # catch up by itself (a tile still settling) before the table is asked what the camera missed
    reorder_s: float = 3.0  # a tile of the same turn that settles this soon after the last play recorded may
    # have been laid before it (a double, then the tile after it: the hand hid the double a moment longer)
    reclaim_share: float = 0.01  # a seen tile is held as a recorded tile whose likelihood is at least this share
    # of its likeliest reading's


@dataclass(frozen=True)
class Reading:
    """One candidate identity for a tile (and the train it was laid on), with its share of the probability."""

    tile: Tile
    probability: float
    legal: bool
    shown: tuple[int, int]  # the values the way round they most likely lie: inner half first
    train: str = ""
    turn_fault: bool = False  # illegal only for whose turn the hub counts it is: the tile carries the train's
    # end, so a play or pass the camera missed would make it legal; the hub then asks, never alerts

    @property
    def text(self) -> str:
        return f"{self.shown[0]}|{self.shown[1]}"


@dataclass(frozen=True)
class PendingQuestion:
    """A question waiting for a phone: what it is about and which action each answer means."""

    question: Question
    tile_id: int | None  # the settled tile it is about (None: who goes first, or a missed play)
    train: str | None
    index: int | None  # the tile's place in its train; for a missed play, the game's length when asked
    options: Mapping[str, Action]
    kind: str = "tile"  # "tile": which tile was laid; "start": who goes first; "missed": what the camera missed
    tiles: Mapping[str, int] = field(default_factory=dict)  # a missed play's choice -> the seen tile it names


@dataclass
class RoundSighting:
    """What the camera has already turned into actions this round (so nothing is recorded twice)."""

    engine_id: int | None = None
    engine: int | None = None  # the engine's value, as read
    illegal: dict[int, Alert] = field(default_factory=dict)  # tile id -> its open alert
    ignored: set[int] = field(default_factory=set)  # tiles the table said were no play
    counts: Mapping[str, tuple[Tile, ...]] | None = None


def typed_tile(text: str) -> Tile | None:
    """A tile typed on a phone as ``a|b`` (None: the text is no such tile)."""
    try:
        a, b = (int(v) for v in text.split("|"))
    except ValueError:
        return None
    return Tile.of(a, b)


def tile_likelihoods(inner: Sequence[float], outer: Sequence[float], top: int) -> np.ndarray:
    """P(pixels | tile a|b) up to a constant, as a (top+1, top+1) symmetric matrix; either way round."""
    p = np.zeros(top + 1)
    q = np.zeros(top + 1)
    n = min(len(inner), top + 1)
    p[:n] = inner[:n]
    q[:min(len(outer), top + 1)] = outer[: top + 1]
    joint = np.outer(p, q)
    both = joint + joint.T
    np.fill_diagonal(both, np.diag(joint))
    return both


class Reconciler:
    """Turns board changes into judged actions through the Table. Runs on the camera thread."""

    def __init__(self, table: Table, calibration: Calibration, settings: ReconcilerSettings | None = None,
                 tracker: Tracker | None = None) -> None:
        self.table = table
        self.tracker = tracker  # told which train each recorded tile belongs to
        self.calibration = calibration
        self.settings = settings or ReconcilerSettings()
        self.round = RoundSighting()
        self.pending: PendingQuestion | None = None
        self._question_ids = itertools.count(1)
        self.board: Board | None = None
        self._game_id: int | None = table.game_id
        self._last_play: tuple[int, Play, float] | None = None  # (tile id, play, game time) the camera last recorded
        # verdicts on presses that waited for a question, not yet taken; a new camera loop has no question
        # open, so nothing waits on an old loop's question
        self.released: list[Verdict] = table.release_presses()
        table.hold_presses(True)
        self._missed_since: float | None = None  # game time since which a press out of turn has waited
        self._retried_after: tuple[int, Action | None] | None = None  # the game's length and last action then

    # ------------------------------------------------------------- the camera
    def update(self, board: Board, changes: Sequence[BoardChange]) -> list[Verdict]:
        """Act on one frame's board: clear what was taken back, then judge what settled."""
        self.board = board
        out: list[Verdict] = []
        if self.table.game_id != self._game_id:  # a new game was set up on the page: nothing seen counts
            self._game_id = self.table.game_id
            self.round = RoundSighting()
            self._close_question(None)
            if self.tracker is not None:
                self.tracker.release_claims()
        for change in changes:
            if change.kind == "gone":
                self._taken_back(change.tile)
        game = self.table.game
        if self.pending is not None and not self._still_open(board):
            self._close_question(None)
        if game is None or self.pending is not None:
            return out
        if game.phase == "idle":
            out += self._look_for_engine(game, board)
        elif game.phase == "playing":
            out += self._judge_new_tiles(board)
            if self.pending is None:
                self._catch_up(board)
        elif game.phase == "ended":
            self._count_hands(game, board)
        if game.phase != "playing" and self.table.waiting_presses():
            self.released += self.table.release_presses()  # no turn to catch up with
        return out

    def _taken_back(self, tile: SeenTile) -> None:
        alert = self.round.illegal.pop(tile.id, None)
        if alert is not None:
            self.table.clear_alert(alert.id, "taken-back")
        self.round.ignored.discard(tile.id)
        if self.pending is not None and self.pending.tile_id == tile.id:
            self._close_question(None)

    # ------------------------------------------------------------ new round
    def _look_for_engine(self, game: Game, board: Board) -> list[Verdict]:
        """A new engine in the hub: ask who goes first (the preset's choice offered first)."""
        engine = board.engine
        expected = game.next_round
        if engine is None or expected is None or engine.id == self.round.engine_id:
            return []
        readings = self._double_readings(engine, game.rules.set, expected)
        best = readings[0]
        if best.tile.high != expected or best.probability < self.settings.accept:
            # an old engine not yet cleared away, or one the camera cannot read: the host starts from a phone
            log.info("engine %s (%.2f) in the hub, %d|%d expected", best.text, best.probability, expected, expected)
            return []
        self.round = RoundSighting(engine_id=engine.id, engine=best.tile.high)
        proposed = self.proposed_first(game)
        order = sorted(game.players, key=lambda p: p != proposed)
        options = {p: self._start(game, best.tile.high, p) for p in order}
        self._ask(f"The engine is {best.text}. Who goes first?", options, None, None, kind="start")
        return []

    def _double_readings(self, tile: SeenTile, top: int, expected: int) -> list[Reading]:
        like = np.diag(tile_likelihoods(tile.inner, tile.outer, top)).copy()
        prior = np.full(top + 1, self.settings.illegal_prior)
        prior[expected] = 1.0
        post = like * prior
        total = float(post.sum()) or 1.0
        order = np.argsort(-post)
        return [Reading(Tile(int(v), int(v)), float(post[v]) / total, int(v) == expected, (int(v), int(v)))
                for v in order[:3]]

    @staticmethod
    def proposed_first(game: Game) -> str | None:
        """Who starts where the preset's rule says (rotating first player); None where the table must tell."""
        if game.rules.first_player == "rotate":
            return game.players[len(game.rounds) % len(game.players)]
        return None

    def start_round(self, first: str, source: str, hands: Mapping[str, int] | None = None,
                    engine: int | None = None) -> Verdict:
        """The table says who goes first: start the round with the engine the camera saw.

        ``engine`` is the one the phone names: it is used when the camera has not seen one, and
        refused when the camera sees another (the table must fix the hub or answer the question).
        """
        game = self.table.game
        if game is None:
            raise RuntimeError("no game is set up")
        seen = self.round.engine
        if seen is not None and engine is not None and seen != engine:
            raise ValueError(f"the camera sees {seen}|{seen} in the hub, not {engine}|{engine}: "
                             "put the right engine in the hub, or answer its question")
        value = seen if seen is not None else engine
        if value is None:
            raise ValueError("the camera has not seen the engine in the hub: say which double it is")
        start = self._start(game, value, first)
        if hands is not None:
            start = Start(value, first, dict(hands))
        if self.pending is not None and self.pending.kind == "start":
            self._close_question(first)
        return self._submit(start, source)

    @staticmethod
    def _start(game: Game, engine: int, first: str) -> Start:
        size = game.rules.hand_size(len(game.players))
        hands = dict.fromkeys(game.players, size)
        if game.rules.first_player == "engine-holder":
            hands[first] = size - 1  # the holder laid the engine from their hand
        return Start(engine, first, hands)

    # ---------------------------------------------------------------- plays
    def _reclaim(self, board: Board) -> None:
        """Tell the tracker again which train holds each recorded tile it sees where the game has one:
        after a restart or a knocked camera every tile is new to it, and its trains unprotected."""
        game = self.table.game
        if self.tracker is None or game is None:
            return
        claims = self.tracker.claims
        for train, chain in board.trains.items():
            recorded = game.trains.get(train, ())
            if sum(1 for held in claims.values() if held == train) >= len(recorded):
                continue  # every recorded tile is held already: a second track here is a second look at one
            for seen, placed in zip(chain, recorded, strict=False):
                if seen.id in claims:
                    continue
                tile = placed.tile
                if self._reads_as(seen, tile, game.rules.set):
                    self.tracker.claim(seen.id, train, (tile.low, tile.high))

    def _reads_as(self, seen: SeenTile, tile: Tile, top: int) -> bool:
        """Whether ``seen``'s pips leave ``tile`` plausible: at least ``reclaim_share`` of the likelihood of its
        likeliest reading."""
        like = tile_likelihoods(seen.inner, seen.outer, top)
        return bool(like[tile.low, tile.high] >= self.settings.reclaim_share * float(like.max()))

    def _judge_new_tiles(self, board: Board) -> list[Verdict]:
        self._reclaim(board)
        out: list[Verdict] = []
        no_play: set[int] = set()  # this frame's tiles judged no play: the next trains' tiles are judged on
        for _ in range(64):  # each pass records at most one tile; a frame rarely brings more than one
            candidate = self._next_candidate(board, no_play)
            if candidate is None or self.pending is not None:
                break
            train, tile = candidate
            verdict = self._judge(train, tile)
            if verdict is None:
                if self.pending is not None:
                    break
                no_play.add(tile.id)
                continue
            out.append(verdict)
        return out

    def _next_candidate(self, board: Board, skip: set[int]) -> tuple[str, SeenTile] | None:
        """The earliest-settled tile lying just past a train's recorded end (and not already judged, nor
        in ``skip``)."""
        state = self.table.state()
        if state is None:
            return None
        found: list[tuple[float, str, SeenTile]] = []
        claims = {} if self.tracker is None else self.tracker.claims
        held = [Quad.of(t.corners) for chain in board.trains.values() for t in chain if t.id in claims]
        for train, recorded in state.trains.items():
            chain = board.trains.get(train, ())
            n = len(recorded)
            if len(chain) <= n:
                continue
            tile = chain[n]
            if tile.id in self.round.illegal or tile.id in self.round.ignored or tile.id in skip:
                continue
            if tile.id in claims:
                continue  # recorded a moment ago on another train it touches; the trains are redrawn next frame
            shadow = 1.0 if self.tracker is None else self.tracker.settings.shadow_share
            if covered_share(Quad.of(tile.corners), held) >= shadow:
                continue  # lies on a tile recorded a moment ago: a second look at it, left out of the next trains
            found.append((tile.settled_at, train, tile))
        if not found:
            return None
        found.sort(key=lambda f: (f[0], f[2].id))
        return found[0][1], found[0][2]

    def readings(self, train: str, tile: SeenTile, also: Sequence[str] = ()) -> list[Reading]:
        """Every tile it could be, most probable first, weighed by whether the rules allow it there.

        ``also``: other trains whose end the tile touches as well (where two trains meet): each
        reading is weighed on each of them, and the rules often tell which one it was laid on. The
        train its chain runs in is favoured, unless the tile continues both about equally well by
        shape (``Board.even``): then both are weighed alike, and where both are legal the players
        are asked.
        """
        even = self.board is not None and tile.id in self.board.even
        elsewhere = 1.0 if even else self.settings.elsewhere_prior
        out = [r for t in (train, *also) for r in self._weighed(t, tile, 1.0 if t == train else elsewhere)]
        total = sum(r.probability for r in out) or 1.0
        out = [Reading(r.tile, r.probability / total, r.legal, r.shown, r.train, r.turn_fault) for r in out]
        out.sort(key=lambda r: (-r.probability, r.train != train))
        return out

    def _weighed(self, train: str, tile: SeenTile, prior: float = 1.0) -> list[Reading]:
        game = self.table.game
        assert game is not None
        top = game.rules.set
        like = tile_likelihoods(tile.inner, tile.outer, top)
        inner = np.zeros(top + 1)
        inner[: min(len(tile.inner), top + 1)] = tile.inner[: top + 1]
        outer = np.zeros(top + 1)
        outer[: min(len(tile.outer), top + 1)] = tile.outer[: top + 1]
        players = self._who_may_play(game)
        taken = game.on_table | {Tile.of(*a.action.tile) for a in self.round.illegal.values()
                                  if isinstance(a.action, Play)}
        out: list[Reading] = []
        end = game.end(train)
        for t in full_set(top):
            if t in taken:
                continue
            errors = [self.table.check(Play(p, (t.low, t.high), train)) for p in players]
            legal = any(e is None for e in errors)
            turn_fault = not legal and t.carries(end) and all(e is not None and e.code in TURN_FAULTS for e in errors)
            weight = prior * float(like[t.low, t.high]) * (1.0 if legal else self.settings.illegal_prior)
            low_first = inner[t.low] * outer[t.high] >= inner[t.high] * outer[t.low]
            out.append(Reading(t, weight, legal, (t.low, t.high) if low_first else (t.high, t.low), train,
                               turn_fault))
        return out

    @staticmethod
    def _who_may_play(game: Game) -> list[str]:
        """The turn's player; on a many-tile first turn the next player may be the one who laid it."""
        turn = game.turn_player
        assert turn is not None
        out = [turn]
        if game.in_multi_first_turn(turn):
            out.append(game.players[(game.players.index(turn) + 1) % len(game.players)])
        return out

    def _play_for(self, game: Game, tile: Tile, train: str) -> Play:
        for p in self._who_may_play(game):
            play = Play(p, (tile.low, tile.high), train)
            if self.table.check(play) is None:
                return play
        return Play(self._who_may_play(game)[0], (tile.low, tile.high), train)

    def _is_known(self, game: Game, tile: SeenTile) -> bool:
        """Whether this 'new' tile is most likely one already on the table, seen where a train's chain
        ran into it: it is no play, whatever is left over once known tiles are ruled out. A tile on the
        table that the camera sees in its own place apart from this one is not it: each tile exists
        once (dev seed 136: an 11|11 laid beside the 12|11 at Ben's end read as 12|11, and was no play)."""
        like = tile_likelihoods(tile.inner, tile.outer, game.rules.set)
        apart = self._seen_apart(game, tile)
        known = sum(float(like[t.low, t.high]) for t in game.on_table if t not in apart)
        upper = like[np.triu_indices(game.rules.set + 1)]
        return known > 0.9 * float(upper.sum())

    def _seen_apart(self, game: Game, tile: SeenTile) -> set[Tile]:
        """The recorded train tiles seen where the game took them, lying clear of ``tile``."""
        if self.board is None or self.tracker is None:
            return set()
        claims = self.tracker.claims
        quad = Quad.of(tile.corners)
        out: set[Tile] = set()
        for train, chain in self.board.trains.items():
            for seen, placed in zip(chain, game.trains.get(train, ()), strict=False):
                if claims.get(seen.id) != train or seen.id == tile.id:
                    continue
                other = Quad.of(seen.corners)
                if max(covered_share(quad, [other]), covered_share(other, [quad])) < 0.2:
                    out.add(placed.tile)
        return out

    def _judge(self, train: str, tile: SeenTile) -> Verdict | None:
        game = self.table.game
        assert game is not None
        if self._is_known(game, tile):
            log.info("the tile after %s's train's end reads as one already on the table: no play", train)
            return None
        also = [t for t in self.board.alternatives.get(tile.id, ()) if t != train and self._next_in(t)] \
            if self.board is not None else []
        readings = self.readings(train, tile, also)
        if not readings:
            self.round.ignored.add(tile.id)
            return None
        best = readings[0]
        if best.turn_fault and best.probability >= self.settings.accept and not tile.face_down:
            reordered = self._laid_before_last(best, tile)
            if reordered is not None:
                return reordered
        sure = self.settings.accept if best.legal else self.settings.alert_accept
        if best.probability >= sure and not best.turn_fault and not tile.face_down:
            if best.train != train:
                log.info("%s continues %s's train as well as %s's: the rules say %s", best.text, best.train,
                         train, best.train)
            return self._record(tile.id, self._play_for(game, best.tile, best.train))
        if not tile.sure:  # never asked about: judged again as its reading firms up (the module's doc)
            log.info("a weak look at %s's train's end reads unsurely as %s: no question", train, best.text)
            return None
        shown = readings[: self.settings.choices]
        several = len({r.train for r in shown}) > 1

        def label(r: Reading) -> str:
            return f"{r.text} on {train_label(r.train)}" if several else r.text

        options = {label(r): self._play_for(game, r.tile, r.train) for r in shown if r.probability >= 0.01 or r is best}
        if best.turn_fault:  # the tile is plain; whether it was this player's may not be
            player = self._play_for(game, best.tile, best.train).player
            text = f"Was that {best.text} on {train_label(best.train)}, laid by {player}?"
            self._ask(text, options, tile.id, train, also=(SOMEONE_ELSE,))
        else:
            self._ask(f"Was that {label(best)}?", options, tile.id, train)
        return None

    def _laid_before_last(self, best: Reading, tile: SeenTile) -> Verdict | None:
        """Record ``tile`` before the play recorded a moment ago when that order makes both legal.

        Two tiles of one turn can settle the wrong way round (a double on the player's train, the
        tile after it on another, the double under the hand a moment longer); recorded as they
        settled, the second looks like the next player's play on a closed train. A tile first seen
        face up only after that play was recorded was laid after it: on fresh eval-hub seed 7030,
        Ben's 3|3 on Ana's closed train, laid 3 s after Ana's 0|11, was recorded as Ana's, before
        it, and her open double then refused every later play.
        """
        game, last, board = self.table.game, self._last_play, self.board
        if game is None or last is None or board is None or self.table.alerts or not game.history:
            return None
        last_id, play, at = last
        if board.time - at > self.settings.reorder_s or game.history[-1] != play or tile.up_since >= at:
            return None
        earlier = Play(play.player, (best.tile.low, best.tile.high), best.train)
        before = replay(game.rules, game.players, game.history[:-1])
        if before.check(earlier) is not None:
            return None
        before.push(earlier)
        if before.check(play) is not None:
            return None
        log.info("%s was laid before %s, which settled first: recorded in that order", earlier, play)
        self.table.undo("camera", waiting_first=False)
        verdict = self._record(tile.id, earlier)
        self._record(last_id, play)
        return verdict

    # ------------------------------------------------------- missed plays
    def _catch_up(self, board: Board) -> None:
        """A draw or pass waits as out of turn: re-judge it now the camera has recorded what it saw, and
        if it still waits after ``missed_grace_s``, ask what the turn's player laid that the camera missed."""
        game = self.table.game
        assert game is not None
        moved = (len(game.history), game.history[-1] if game.history else None)
        if moved != self._retried_after:  # a press that waits is refused again until the game moves on
            self._retried_after = moved
            self.released += self.table.retry_presses()
        waiting = self.table.waiting_presses()
        if not waiting:
            self._missed_since = None
            return
        if self._missed_since is None:
            self._missed_since = board.time
        if board.time - self._missed_since >= self.settings.missed_grace_s:
            self._ask_missed(board, waiting[0])

    def _ask_missed(self, board: Board, press: Action | None, tile_id: int | None = None) -> None:
        """Ask what the turn's player laid, after a ``press`` out of turn or after the table said another
        player laid tile ``tile_id``. The likeliest legal plays of the tiles lying past the trains'
        recorded ends come first (tiles the camera saw but could not place); any other tile can be
        typed in, and "nothing was missed" makes the press out of turn (or the tile no play) after all."""
        game = self.table.game
        assert game is not None and game.turn_player is not None
        turn = game.turn_player
        options: dict[str, Action] = {}
        tiles: dict[str, int] = {}
        candidates: list[tuple[float, Reading, int]] = []
        for train, chain in board.trains.items():
            n = len(game.trains.get(train, ()))
            if len(chain) > n and chain[n].id not in self.round.illegal:
                candidates += [(r.probability, r, chain[n].id) for r in self.readings(train, chain[n]) if r.legal]
        candidates.sort(key=lambda c: -c[0])
        for probability, reading, seen_id in candidates:
            label = f"{reading.text} on {train_label(reading.train)}"
            if probability < 0.01 or label in options or len(options) >= self.settings.choices:
                continue
            options[label] = self._play_for(game, reading.tile, reading.train)
            tiles[label] = seen_id
        if press is None:
            text = f"Then the camera missed {turn}'s turn. What did {turn} lay?"
        else:
            what = {"draw": "drew", "pass": "passed", "out": "went out"}[press.act]
            who = getattr(press, "player", "someone")
            why = ("the camera has not seen their last tile" if who == turn
                   else f"by the hub's count it is {turn}'s turn")
            text = f"{who} {what}, but {why}. What did {turn} lay that the camera missed?"
        self._ask(text, options, tile_id, None, kind="missed", tiles=tiles)

    def _parse_missed(self, answer: str) -> Play:
        """A typed missed play: ``a|b`` (on the train where the turn's player may lay it and a tile lies
        unrecorded, or their own, then the Mexican) or ``a|b on TRAIN``."""
        game = self.table.game
        assert game is not None
        text, _, train = answer.partition(" on ")
        tile = typed_tile(text)
        if tile is None:
            raise ValueError(f"{answer!r} is neither a choice nor a tile a|b (on a train)")
        plays = game.legal_plays([tile])
        if train:
            plays = [p for p in plays if train.strip() in (p.train, train_label(p.train))]
        if not plays:
            raise ValueError(f"{answer!r} is no legal play for {game.turn_player}: say what was laid, or "
                             f"{NOTHING_MISSED!r}")
        board = self.board
        unrecorded = {t for t, chain in (board.trains.items() if board is not None else ())
                      if len(chain) > len(game.trains.get(t, ()))}
        plays.sort(key=lambda p: (p.train not in unrecorded, p.train != p.player, p.train != MEXICAN))
        return plays[0]

    def _next_in(self, train: str) -> bool:
        """Whether a new tile at the end of ``train``'s recorded tiles would be that train's next one."""
        game, board = self.table.game, self.board
        if game is None or board is None or self.tracker is None:
            return False
        claims = self.tracker.claims
        held = sum(1 for t in board.trains.get(train, ()) if claims.get(t.id) == train)
        return held == len(game.trains.get(train, ()))

    def _record(self, tile_id: int | None, action: Action, source: str = "camera", claim: bool = True) -> Verdict:
        """Submit a camera play; an illegal one is remembered with its alert until the tile goes. A legal one's
        tile is held in its train, unless ``claim`` is False (the tile is not surely the one laid)."""
        verdict = self._submit(action, source)
        if tile_id is None:
            return verdict
        if not verdict.ok:
            assert verdict.alert is not None
            self.round.illegal[tile_id] = verdict.alert
        elif isinstance(action, Play):
            self._last_play = (tile_id, action, 0.0 if self.board is None else self.board.time)
            if self.tracker is not None and claim:
                self.tracker.claim(tile_id, action.train, action.tile)
        return verdict

    def _submit(self, action: Action, source: str = "camera") -> Verdict:
        verdict = self.table.submit(action, source)
        if verdict.ok and isinstance(action, Start) and self.tracker is not None:
            self.tracker.release_claims()
        log.info("camera: %s -> %s", action, "ok" if verdict.ok else verdict.error)
        return verdict

    # ------------------------------------------------------------ questions
    def _ask(self, text: str, options: Mapping[str, Action], tile_id: int | None, train: str | None,
             kind: str = "tile", tiles: Mapping[str, int] | None = None, also: tuple[str, ...] = ()) -> None:
        last = {"tile": (NONE_OF_THESE,), "missed": (NOTHING_MISSED,)}.get(kind, ())
        choices = (*options, *also, *last)
        question = Question(next(self._question_ids), text, choices, typed=kind != "start")
        game = self.table.game
        if kind == "missed":
            index = None if game is None else len(game.history)
        else:
            index = None if train is None or game is None else len(game.trains.get(train, ()))
        self.pending = PendingQuestion(question, tile_id, train, index, MappingProxyType(dict(options)), kind,
                                       MappingProxyType(dict(tiles or {})))
        self.table.bus.publish(question)

    def _still_open(self, board: Board) -> bool:
        """Whether the open question still means something (a phone may have settled it another way)."""
        pending, state = self.pending, self.table.state()
        if pending is None or state is None:
            return False
        if pending.kind == "start":
            return state.phase == "idle"
        if pending.kind == "missed":
            game = self.table.game
            return state.phase == "playing" and game is not None and len(game.history) == pending.index
        return state.phase == "playing" and len(state.trains.get(pending.train or "", ())) == pending.index

    def _close_question(self, answer: str | None) -> None:
        """Close the open question; the presses that waited for it are judged now (their verdicts are
        published, and kept in ``released`` for whoever drives the camera loop)."""
        pending = self.pending
        if pending is None:
            return
        self.pending = None
        self._missed_since = None
        self.table.bus.publish(QuestionClosed(pending.question.id, answer))
        if pending.kind == "missed" and answer == NOTHING_MISSED:
            self.released += self.table.release_presses()  # the table says so: those presses were out of turn
        elif pending.kind != "start":
            self.released += self.table.retry_presses()

    def take_released(self) -> list[Verdict]:
        """The verdicts on presses that waited for a question since the last call."""
        out, self.released = self.released, []
        return out

    def answer(self, question_id: int, answer: str, source: str = "web") -> Verdict | None:
        """A phone's answer: one of the question's choices, or any tile written ``a|b``."""
        pending = self.pending
        if pending is None or pending.question.id != question_id:
            raise KeyError(f"question {question_id} is not open")
        if pending.kind == "missed":
            action = None if answer == NOTHING_MISSED else pending.options.get(answer) or self._parse_missed(answer)
        elif answer == SOMEONE_ELSE and answer in pending.question.choices:
            # the tile stays to be judged again once the table has said what the turn's player did
            self._close_question(answer)
            if self.board is not None:
                self._ask_missed(self.board, None, pending.tile_id)
            return None
        else:
            action = pending.options.get(answer)
            if action is None and answer != NONE_OF_THESE:
                action = self._parse_answer(answer, pending)
        verdict = None
        if action is None:
            if pending.tile_id is not None:
                self.round.ignored.add(pending.tile_id)
                if self.tracker is not None:
                    self.tracker.dismiss(pending.tile_id)
        else:  # recorded before the question closes, so the presses that waited for it come after it
            # a tile question's answer, offered or typed in, names the tile the camera saw: its alert then
            # clears when it is taken back, and it is not asked about again (dev seed 132: "6|3" typed four
            # times over, four alerts that never cleared); a missed play's is the seen tile it offered, if any
            seen = pending.tiles.get(answer) if pending.kind == "missed" else pending.tile_id
            typed_over_a_back = answer not in pending.options and self._back_not_read_as(seen, action)
            verdict = self._record(seen, action, source, claim=not typed_over_a_back)
        self._close_question(answer)
        return verdict

    def _back_not_read_as(self, tile_id: int | None, action: Action) -> bool:
        """Whether the tile asked about lies face down and its pips, read anyway, do not show the tile typed in.

        The typed tile then names the play, not that back: seed 6014, a back of Cy's hand lay by Dee's end
        and was asked about as Dee laid 4|11 beside it; the table typed 4|11, the back was held as Dee's
        tile, and the real 4|11, left loose, was counted in Cy's hand. Left unheld, the tile that reads as
        it is found in the train (``_reclaim``)."""
        game, board = self.table.game, self.board
        if tile_id is None or not isinstance(action, Play) or game is None or board is None:
            return False
        seen = next((t for t in (*board.backs, *(t for chain in board.trains.values() for t in chain))
                     if t.id == tile_id), None)
        if seen is None or not seen.face_down or not (seen.inner and seen.outer):
            return False
        return not self._reads_as(seen, Tile.of(*action.tile), game.rules.set)

    def _parse_answer(self, answer: str, pending: PendingQuestion) -> Action:
        game = self.table.game
        tile = typed_tile(answer)
        if tile is None:
            raise ValueError(f"{answer!r} is neither a choice of question {pending.question.id} nor a tile a|b")
        if game is None or pending.train is None:
            raise ValueError(f"{answer!r} is not one of the choices")
        return self._play_for(game, tile, pending.train)

    # ------------------------------------------------------ end of the round
    def seat_of(self, point: tuple[float, float], players: Sequence[str]) -> str | None:
        """The player whose seat a laid-out tile is in front of: the nearest train direction."""
        cx, cy = self.calibration.centre
        angle = math.degrees(math.atan2(point[1] - cy, point[0] - cx))
        best, gap = None, 360.0
        for p in players:
            seat = self.calibration.seat_angle(p)
            if seat is None:
                continue
            d = abs((angle - seat + 180) % 360 - 180)
            if d < gap:
                best, gap = p, d
        return best

    def _count_hands(self, game: Game, board: Board) -> None:
        hands = self.read_hands(game, board)
        if hands == self.round.counts:
            return
        self.round.counts = hands
        counts = {p: game.hand_pips([(t.low, t.high) for t in tiles]) for p, tiles in hands.items()}
        tiles = {p: len(ts) for p, ts in hands.items()}
        self.table.bus.publish(HandCounts(MappingProxyType(counts), MappingProxyType(tiles)))

    def read_hands(self, game: Game, board: Board) -> Mapping[str, tuple[Tile, ...]]:
        """Each seat's laid-out tiles, read so that no tile is counted twice or taken from the table.

        A hand laid out near the end of a train may look like its continuation, so every
        settled tile past the trains' recorded ends counts, as well as the loose ones. A seat
        showing more tiles than its player holds loses its second looks (``_second_looks``); if it
        still shows more, its tiles take only what the other seats leave, and one whose likeliest
        reading is taken lies elsewhere, each tile existing once (eval-hub seed 7009 at 2028x1520: a
        pale stripe of the cloth by Ana's hand read as 0|0, and took the 0|0 of Ben's hand).
        """
        top = game.rules.set
        taken = set(game.on_table)
        scored: list[tuple[float, int, Tile, str]] = []
        claims = {} if self.tracker is None else self.tracker.claims
        laid_out = list(board.loose)
        for train, chain in board.trains.items():
            laid_out += [t for t in chain[len(game.trains.get(train, ())):] if not t.face_down]
        at_seat: dict[str, list[int]] = {}
        for k, seen in enumerate(laid_out):
            if seen.id in claims or self._is_known(game, seen):
                continue  # a train's tile, seen apart from its train (a hand over the table, a gap)
            seat = self.seat_of(seen.centre, game.players)
            if seat is not None and seat != game.went_out:
                at_seat.setdefault(seat, []).append(k)
        # the round's last tile settled before any hand was turned over to be counted
        ended = max((t.settled_at for train, chain in board.trains.items()
                     for t in chain[:len(game.trains.get(train, ()))]), default=0.0)
        if self._last_play is not None:  # a recorded tile found again later (a new track) settles anew: dev
            ended = min(ended, self._last_play[2])  # seed 144's settled after Ben's hand was turned over
        backs = [b for b in board.backs if b.inner and b.outer and b.id not in claims and not self._is_known(game, b)]
        over: dict[str, int] = {}  # how many more tiles a seat shows than its player holds, second looks left out
        for seat, ks in at_seat.items():
            held = None if game.hand_counts is None else game.hand_counts.get(seat)
            if held is not None and held < 0:
                held = None  # plays given to the wrong player (seed 7033: Cy at -2): what the seat shows counts
            if held is not None and len(ks) < held:
                found = self._backs_in_row(laid_out, ks, backs, held - len(ks), seat, game.players)
                ks += range(len(laid_out), len(laid_out) + len(found))
                laid_out += found
                backs = [b for b in backs if b not in found]
            ghosts = self._second_looks(laid_out, ks, held, ended)
            kept = [k for k in ks if k not in ghosts]
            if held is not None and len(kept) > held:
                over[seat] = len(kept) - held
            for k in kept:
                like = tile_likelihoods(laid_out[k].inner, laid_out[k].outer, top)
                for t in full_set(top):
                    scored.append((float(like[t.low, t.high]), k, t, seat))
        # a seat still showing more tiles than its player holds takes what the other seats leave
        scored.sort(key=lambda s: (s[3] in over, -s[0]))
        best = {k: t for _, k, t, _ in reversed(scored)}  # each tile's likeliest reading: the first of its own
        hands: dict[str, list[Tile]] = {p: [] for p in game.players if p != game.went_out}
        done: set[int] = set()
        for _, k, t, seat in scored:
            if k in done or t in taken:
                continue
            done.add(k)
            if over.get(seat, 0) and t != best[k]:
                over[seat] -= 1  # what it reads as lies elsewhere: a second look, each tile existing once
                continue
            taken.add(t)
            hands[seat].append(t)
        return MappingProxyType({p: tuple(sorted(ts)) for p, ts in hands.items()})

    def _backs_in_row(self, laid_out: Sequence[SeenTile], ks: Sequence[int], backs: Sequence[SeenTile],
                      missing: int, seat: str, players: Sequence[str]) -> list[SeenTile]:
        """Up to ``missing`` of the read ``backs`` lying among the seat's laid-out tiles, the nearest first.
        A seat shows fewer tiles than its player holds: the detector takes a tile with few pips for a back
        now and then, and among a hand laid out face up such a back is one of its tiles (dev seeds 139 and
        96: a 0|0, and 147: a 1|5, 0|9, 1|1 and 2|4, each left out of the count)."""
        shown = [laid_out[k] for k in ks]
        near: list[tuple[float, int]] = []
        for i, back in enumerate(backs):
            if self.seat_of(back.centre, players) != seat:
                continue
            gap = min(math.dist(back.centre, t.centre) for t in shown)
            if gap < 1.3 * Quad.of(back.corners).length:  # beside one of them, in the row: not the boneyard
                near.append((gap, i))
        return [backs[i] for _, i in sorted(near)[:missing]]

    @staticmethod
    def _second_looks(laid_out: Sequence[SeenTile], ks: Sequence[int], held: int | None, ended: float,
                      late_s: float = 2.0) -> list[int]:
        """Of a seat's laid-out tiles ``ks``, those to leave out when there are more than the ``held`` the
        game says the player holds, in this order:

        - those already face up before the round's last tile settled at ``ended`` (hands are turned over
          after it: such a thing lay there all along, read wrongly), the longest first;
        - those turned face up more than ``late_s`` after the seat's others, the latest first (a hand is
          turned over at once; dev seed 142: a shadow by Ana's tiles, seen 5 s later, read as 0|0);
        - those the detector took for a back now and then (a back from the boneyard, seen face up in a
          few frames, reads as some tile), the most often first;
        - then each most covered by the others in turn, while it lies at least half on them (a box over
          the joint of two tiles laid end to end reads as a tile made of their halves);
        - then one lying apart from all the others (``_apart``).
        """
        if held is None:
            return []
        left, out = list(ks), []
        turned = float(np.median([laid_out[k].up_since for k in ks])) if ks else 0.0
        while len(left) > held:
            worst = Reconciler._least_likely(laid_out, left, ended, turned + late_s)
            if worst is None:
                break
            left.remove(worst)
            out.append(worst)
        return out

    @staticmethod
    def _least_likely(laid_out: Sequence[SeenTile], left: Sequence[int], ended: float, late: float) -> int | None:
        """The one of ``left`` to leave out next, by the order ``_second_looks`` gives; None when none is."""
        earliest = min(left, key=lambda k: laid_out[k].up_since)
        if laid_out[earliest].up_since < ended:
            return earliest
        latest = max(left, key=lambda k: laid_out[k].up_since)
        if laid_out[latest].up_since > late:
            return latest
        flickered = min(left, key=lambda k: laid_out[k].up_share)
        if laid_out[flickered].up_share < 1.0:
            return flickered
        quads = {k: Quad.of(laid_out[k].corners) for k in left}
        share, covered = max((covered_share(quads[k], [quads[o] for o in left if o != k]), k) for k in left)
        return covered if share >= 0.5 else Reconciler._apart(quads)

    @staticmethod
    def _apart(quads: Mapping[int, Quad], lengths: float = 3.0) -> int | None:
        """Of three or more, the one lying more than ``lengths`` tile lengths from every other, the farthest
        first: a hand is laid out together. Eval-hub seed 6000 at 2028x1520: a phantom on the corner of a
        checked cloth, seen on and off all round and found again just as the hands were turned over, lay 7
        tile lengths from Ben's two tiles and was counted as a 0|2 of his."""
        if len(quads) < 3:
            return None
        length = float(np.median([q.length for q in quads.values()]))
        gap = {k: min(float(np.linalg.norm(q.centre - o.centre)) for j, o in quads.items() if j != k)
               for k, q in quads.items()}
        far = max(gap, key=lambda k: gap[k])
        return far if gap[far] > lengths * length else None

    def score_from_camera(self) -> Score:
        """The Score the table confirms: each seat's laid-out tiles as the camera read them."""
        game = self.table.game
        if game is None or game.phase != "ended" or self.board is None:
            raise RuntimeError("the round is not over: there are no hands to count")
        hands = self.read_hands(game, self.board)
        return Score({p: tuple((t.low, t.high) for t in tiles) for p, tiles in hands.items()})

    def confirm_score(self, source: str) -> Verdict:
        """The host confirmed the camera's counts: record the round's score."""
        return self.table.submit(self.score_from_camera(), source)

    # -------------------------------------------------------- table actions
    def after_undo(self) -> None:
        """An action was undone: tiles the game no longer holds must be judged again only once re-laid."""
        state = self.table.state()
        board = self.board
        if state is None or board is None:
            return
        for train, chain in board.trains.items():
            recorded = len(state.trains.get(train, ()))
            for tile in chain[recorded:]:
                if tile.id not in self.round.illegal:
                    self.round.ignored.add(tile.id)
        if state.phase == "idle" and board.engine is not None and state.engine is None:
            self.round.engine_id = board.engine.id
