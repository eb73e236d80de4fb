"""The rules engine: one mutable game, judged one table-log action at a time.

Modelled on python-chess's ``Board``: :meth:`Game.push` applies an action or raises
:class:`IllegalPlay` and changes nothing; :meth:`Game.check` only judges. Each rule
lives in one method below, in the order the verdict codes take precedence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import MappingProxyType

from .actions import MEXICAN, Action, Blocked, Draw, Out, Pass, Play, Score, Start
from .errors import Code, IllegalPlay
from .rules import Rules
from .state import GameState, LastPlay, OpenDouble, PlacedTile, RoundResult
from .tiles import Tile, set_size


class IncompleteScore(ValueError):
    """A ``score`` that leaves out a player who did not go out: the log itself is wrong."""


def train_label(train: str) -> str:
    return "the Mexican train" if train == MEXICAN else f"{train}'s train"


class Game:
    """A game of Mexican Train at one table: the board, the turn, the rounds and the scores."""

    def __init__(self, rules: Rules, players: Sequence[str]) -> None:
        names = tuple(players)
        rules.check_players(len(names))
        if len(set(names)) != len(names):
            raise ValueError("players: every name must be different")
        if MEXICAN in names:
            raise ValueError(f"players: {MEXICAN!r} is the shared train, not a player's name")
        self.rules = rules
        self.players = names
        self.history: list[Action] = []
        self.rounds: list[RoundResult] = []
        self._seat = {p: i for i, p in enumerate(names)}
        self._trains_names = frozenset(names) | {MEXICAN}
        self._reset_round(None)
        self.phase = "idle"

    # ----------------------------------------------------------------- state
    def _reset_round(self, engine: int | None) -> None:
        self.engine = engine
        self.trains: dict[str, list[PlacedTile]] = {t: [] for t in (*self.players, MEXICAN)}
        self.on_table: set[Tile] = set() if engine is None else {Tile(engine, engine)}
        self.markers: set[str] = set()
        self.open_doubles: list[OpenDouble] = []  # in the order they were played
        self.turn: int | None = None
        self.owes = False  # satisfy: the turn's player owes a tile after their double
        self.turn_doubles = 0  # doubles the turn's player has played this turn
        self.turn_plays = 0  # tiles the turn's player has played this turn
        self.drew = False  # the turn's player drew since their last double (or turn start)
        self.first_turn_done: set[str] = set()
        self.passed: set[str] = set()  # players who passed since the last play
        self.last_player: str | None = None
        self.last_play: LastPlay | None = None
        self.hand_counts: dict[str, int] | None = None
        self.boneyard: int | None = None
        self.went_out: str | None = None

    @property
    def turn_player(self) -> str | None:
        return None if self.turn is None else self.players[self.turn]

    @property
    def game_over(self) -> bool:
        return len(self.rounds) >= len(self.rules.engines)

    @property
    def next_round(self) -> int | None:
        if self.phase != "idle":
            return self.engine
        return None if self.game_over else self.rules.engines[len(self.rounds)]

    def end(self, train: str) -> int:
        """The open value of a train (the engine's value while it is empty)."""
        tiles = self.trains[train]
        return tiles[-1].outer if tiles else self.engine  # type: ignore[return-value]

    def totals(self) -> dict[str, int]:
        totals = dict.fromkeys(self.players, 0)
        for r in self.rounds:
            for p, s in r.scores.items():
                totals[p] += s
        return totals

    def leaders(self) -> tuple[str, ...]:
        totals = self.totals()
        best = (max if self.rules.positive_scoring else min)(totals.values())
        return tuple(p for p in self.players if totals[p] == best)

    def coverable(self, value: int) -> bool:
        """Whether some tile could still cover a double of ``value``."""
        return any(Tile.of(value, x) not in self.on_table for x in range(self.rules.set + 1) if x != value)

    def active_open_doubles(self) -> list[OpenDouble]:
        """Open doubles that still restrict play, in the order they must be covered."""
        live = [d for d in self.open_doubles if self.coverable(d.value)]
        return live[::-1] if self.rules.close_doubles == "reverse" else live

    def boneyard_empty(self) -> bool:
        return self.boneyard is not None and self.boneyard <= 0

    def in_multi_first_turn(self, player: str) -> bool:
        return self.rules.first_turn == "many" and player not in self.first_turn_done

    def state(self) -> GameState:
        active = tuple(self.active_open_doubles()) if self.rules.doubles_must_be_satisfied else ()
        return GameState(
            players=self.players,
            preset=self.rules.preset,
            set=self.rules.set,
            phase=self.phase,
            round=self.next_round,
            engine=self.engine,
            turn=self.turn_player,
            trains=MappingProxyType({t: tuple(v) for t, v in self.trains.items()}),
            ends=MappingProxyType(
                {} if self.engine is None else {t: self.end(t) for t in self.trains}
            ),
            markers=frozenset(self.markers),
            open_doubles=active,
            owes_follow_up=self.owes,
            hand_counts=None if self.hand_counts is None else MappingProxyType(dict(self.hand_counts)),
            last_play=self.last_play,
            rounds=tuple(self.rounds),
            scores=MappingProxyType(self.totals()),
            leaders=self.leaders(),
            game_over=self.game_over,
            went_out=self.went_out,
        )

    # ------------------------------------------------------------- judging
    def check(self, action: Action) -> IllegalPlay | None:
        """The reason ``action`` is illegal now, or None. Changes nothing."""
        try:
            self._judge(action)
        except IllegalPlay as e:
            return e
        return None

    def push(self, action: Action) -> None:
        """Apply a legal action; an illegal one raises IllegalPlay and changes nothing."""
        self._judge(action)
        self._apply(action)
        self.history.append(action)

    def _judge(self, action: Action) -> None:
        if isinstance(action, Play):
            self._judge_play(action)
        elif isinstance(action, (Draw, Pass)):
            self._need_round(action.act)
            self._known_player(action.player)
            self._need_turn(action.player)
            if isinstance(action, Pass):
                self._judge_pass(action.player)
        elif isinstance(action, Out):
            self._need_round("out")
            self._known_player(action.player)
            self._judge_out(action.player)
        elif isinstance(action, Blocked):
            self._need_round("blocked")
            missing = [p for p in self.players if p not in self.passed]
            if missing:
                raise IllegalPlay(
                    Code.NOT_OVER, f"Not blocked: {', '.join(missing)} {'has' if len(missing) == 1 else 'have'}"
                    " not passed since the last play",
                )
        elif isinstance(action, Score):
            self._judge_score(action)
        elif isinstance(action, Start):
            self._judge_start(action)
        else:  # pragma: no cover - the Action union is closed
            raise TypeError(f"not an action: {action!r}")

    def _need_round(self, act: str) -> None:
        if self.phase != "playing":
            raise IllegalPlay(Code.ROUND_OVER, f"No round is being played, so '{act}' cannot be recorded")

    def _known_player(self, player: str) -> None:
        if player not in self._seat:
            raise IllegalPlay(Code.UNKNOWN_PLAYER, f"Nobody called {player!r} is playing at this table")

    def _acting_turn(self, player: str) -> int:
        """Whose turn it is for ``player``'s action.

        A multi-tile first turn hands over when the next player acts, but only once its
        player has laid a tile: a player with nothing to lay must draw and pass (marker).
        """
        assert self.turn is not None
        current = self.players[self.turn]
        nxt = (self.turn + 1) % len(self.players)
        if (
            player != current
            and self.turn_plays
            and self.in_multi_first_turn(current)
            and self.players[nxt] == player
        ):
            return nxt
        return self.turn

    def _need_turn(self, player: str) -> int:
        """The turn ``player`` acts in (see :meth:`_acting_turn`), or not-your-turn."""
        acting = self._acting_turn(player)
        if self.players[acting] != player:
            raise IllegalPlay(Code.NOT_YOUR_TURN, f"It is {self.turn_player}'s turn, not {player}'s")
        return acting

    def _handing_over(self, player: str) -> bool:
        return self.turn is not None and self._acting_turn(player) != self.turn

    def _judge_play(self, play: Play) -> None:
        self._need_round("play")
        player, train = play.player, play.train
        self._known_player(player)
        if train not in self._trains_names:
            raise IllegalPlay(Code.UNKNOWN_TRAIN, f"There is no train called {train!r}")
        tile = self._parse_tile(play.tile)
        fresh = self._need_turn(player) != self.turn
        if tile in self.on_table:
            what = "the engine" if tile == Tile(self.engine, self.engine) else "already on the table"  # type: ignore[arg-type]
            raise IllegalPlay(Code.DUPLICATE_TILE, f"{tile} is {what}")
        due = self._due_double(tile, fresh) if self.open_doubles else None
        if due is not None and train != due.train:
            raise IllegalPlay(
                Code.OPEN_DOUBLE,
                f"The double {due.value}|{due.value} on {train_label(due.train)} must be covered first",
            )
        self._judge_train_open(player, train)
        end = self.end(train)
        if not tile.carries(end):
            raise IllegalPlay(Code.NO_MATCH, f"{tile} does not match {train_label(train)}, which ends in {end}")

    def _parse_tile(self, raw: object) -> Tile:
        if isinstance(raw, (tuple, list)) and len(raw) == 2:
            a, b = raw
            top = self.rules.set
            if type(a) is int and type(b) is int and 0 <= a <= top and 0 <= b <= top:  # bool is not a pip count
                return Tile(a, b) if a <= b else Tile(b, a)
        shown = "|".join(map(str, raw)) if isinstance(raw, (tuple, list)) else repr(raw)
        raise IllegalPlay(Code.BAD_TILE, f"{shown} is not a tile of a double-{self.rules.set} set")

    def _due_double(self, tile: Tile, fresh_turn: bool) -> OpenDouble | None:
        """The open double this play must cover, or None when the play is free to go elsewhere."""
        if not self.rules.doubles_must_be_satisfied or not self.open_doubles:
            return None
        owes = self.owes and not fresh_turn
        if owes and (tile.is_double or self.turn_doubles == 1):
            return None  # a double's follow-up (or a further double) may go on any usable train
        active = self.active_open_doubles()
        return active[0] if active else None

    def _judge_train_open(self, player: str, train: str) -> None:
        if self._first_turn_bars(player, train):
            raise IllegalPlay(
                Code.TRAIN_CLOSED, f"On a first turn, {player} may play only on their own train"
            )
        if not self._is_open_to(player, train):
            raise IllegalPlay(Code.TRAIN_CLOSED, f"{train_label(train)} is closed: it carries no marker")

    def _first_turn_bars(self, player: str, train: str) -> bool:
        """``no_foreign_trains_first_turn``: on their first turn of the round, own train only."""
        return self.rules.no_foreign_trains_first_turn and player not in self.first_turn_done and train != player

    def _judge_pass(self, player: str) -> None:
        if (
            self.rules.doubles_must_be_satisfied
            and self.owes
            and not self._handing_over(player)
            and not self.drew
            and not self.boneyard_empty()
        ):
            raise IllegalPlay(
                Code.MUST_FOLLOW_DOUBLE,
                f"{player} played a double and must play one more tile, or draw, before passing",
            )

    def _judge_out(self, player: str) -> None:
        if player != self.last_player:
            raise IllegalPlay(Code.NOT_OVER, f"{player} did not make the last play, so cannot be out")
        if self.hand_counts is not None and self.hand_counts[player] != 0:
            n = self.hand_counts[player]
            raise IllegalPlay(Code.NOT_OVER, f"{player} should still hold {n} tile{'s' if n != 1 else ''}")

    def _judge_score(self, score: Score) -> None:
        if self.phase != "ended":
            raise IllegalPlay(Code.ROUND_OVER, "The round is not over yet: record 'out' or 'blocked' first")
        for p in score.hands:
            self._known_player(p)
        missing = [p for p in self.players if p not in score.hands and p != self.went_out]
        if missing:
            raise IncompleteScore(f"no hand given for {', '.join(missing)}")
        for hand in score.hands.values():
            if not isinstance(hand, int):
                for raw in hand:
                    self._parse_tile(raw)

    def _judge_start(self, start: Start) -> None:
        if self.game_over:
            raise IllegalPlay(Code.ROUND_OVER, "The game is over: every round has been played")
        self._known_player(start.first)
        for p in start.hands or ():
            self._known_player(p)
        if not 0 <= start.engine <= self.rules.set:
            raise IllegalPlay(Code.BAD_TILE, f"{start.engine}|{start.engine} is not in a double-{self.rules.set} set")
        if self.phase != "idle":
            raise IllegalPlay(
                Code.NOT_OVER, "The current round is not finished: record 'out' or 'blocked' and its scores first"
            )
        if start.hands is not None:
            missing = [p for p in self.players if p not in start.hands]
            if missing:
                raise IncompleteScore(f"no hand size given for {', '.join(missing)}")

    # ------------------------------------------------------------- applying
    def _apply(self, action: Action) -> None:
        if isinstance(action, Start):
            self._reset_round(action.engine)
            self.phase = "playing"
            self.turn = self._seat[action.first]
            if action.hands is not None:
                self.hand_counts = dict(action.hands)
                self.boneyard = set_size(self.rules.set) - 1 - sum(action.hands.values())
            return
        if isinstance(action, Score):
            self._apply_score(action)
            return
        if isinstance(action, Blocked):
            self._end_round(None)
            return
        if isinstance(action, Out):
            self._end_round(action.player)
            return
        if self._handing_over(action.player):
            self._end_turn()
        if isinstance(action, Draw):
            self.drew = True
            if self.hand_counts is not None:
                self.hand_counts[action.player] += 1
                self.boneyard = (self.boneyard or 0) - 1
        elif isinstance(action, Pass):
            self.markers.add(action.player)
            self.passed.add(action.player)
            self._end_turn()
        else:
            self._apply_play(action)

    def _apply_play(self, play: Play) -> None:
        player, train = play.player, play.train
        tile = Tile.of(*play.tile)
        trains = self.trains[train]
        end = self.end(train)
        if trains:
            covered = OpenDouble(train, end)
            if trains[-1].inner == trains[-1].outer and covered in self.open_doubles:
                self.open_doubles.remove(covered)
        trains.append(PlacedTile(end, tile.other(end)))
        self.on_table.add(tile)
        if train == player:
            self.markers.discard(player)
        if self.hand_counts is not None:
            self.hand_counts[player] -= 1
        self.last_player = player
        self.last_play = LastPlay(player, train, tile)
        self.turn_plays += 1
        self.passed.clear()
        multi = self.in_multi_first_turn(player)
        if tile.is_double:
            if self.rules.doubles_must_be_satisfied:
                self.open_doubles.append(OpenDouble(train, tile.high))
                if not multi:
                    self.owes = True
                    self.turn_doubles += 1
                    self.drew = False
            else:
                self.drew = False  # follow: the player takes another turn
        elif not multi:
            self._end_turn()

    def _end_turn(self) -> None:
        assert self.turn is not None
        self.first_turn_done.add(self.players[self.turn])
        self.turn = (self.turn + 1) % len(self.players)
        self.owes = False
        self.turn_doubles = 0
        self.turn_plays = 0
        self.drew = False

    def _end_round(self, went_out: str | None) -> None:
        self.phase = "ended"
        self.went_out = went_out
        self.turn = None
        self.owes = False

    def _apply_score(self, score: Score) -> None:
        pips = {p: self.hand_pips(h) for p, h in score.hands.items()}
        if self.went_out is not None:
            pips[self.went_out] = 0
        if self.rules.positive_scoring:
            scores = dict.fromkeys(self.players, 0)
            winner = self.went_out
            if winner is None:
                low = min(pips.values())
                lowest = [p for p in self.players if pips[p] == low]
                winner = lowest[0] if len(lowest) == 1 else None
            if winner is not None:
                scores[winner] = sum(v for p, v in pips.items() if p != winner)
        else:
            scores = {p: pips[p] for p in self.players}
        self.rounds.append(RoundResult(self.engine, MappingProxyType(scores), self.went_out))  # type: ignore[arg-type]
        self.phase = "idle"

    def hand_pips(self, hand: int | Iterable[Sequence[int]]) -> int:
        """A hand's penalty: its pips, with the double blank worth what the rules say."""
        if isinstance(hand, int):
            return hand
        total = 0
        for a, b in hand:
            total += self.rules.double_blank if a == b == 0 else a + b
        return total

    # --------------------------------------------------------- move generation
    def usable_trains(self, player: str | None = None) -> dict[str, int]:
        """Trains ``player`` (by default the turn's player) may play a non-double on now, with their open ends."""
        if self.phase != "playing":
            return {}
        player = player or self.turn_player
        assert player is not None
        fresh = self._handing_over(player)
        if self.players[self._acting_turn(player)] != player:
            return {}
        owes = self.owes and not fresh
        restricted = self.rules.doubles_must_be_satisfied and not (owes and self.turn_doubles == 1)
        active = self.active_open_doubles() if restricted else []
        candidates: Iterable[str] = [active[0].train] if active else self.trains
        out: dict[str, int] = {}
        for train in candidates:
            if not self._first_turn_bars(player, train) and self._is_open_to(player, train):
                out[train] = self.end(train)
        return out

    def _is_open_to(self, player: str, train: str) -> bool:
        """Own, Mexican and marked trains are open; so is any train whose open double may be covered."""
        if train in (player, MEXICAN) or train in self.markers:
            return True
        top = self.trains[train][-1] if self.trains[train] else None
        return (
            self.rules.doubles_must_be_satisfied
            and top is not None
            and top.inner == top.outer
            and OpenDouble(train, top.outer) in self.active_open_doubles()
        )

    def legal_plays(self, tiles: Iterable[Tile], player: str | None = None) -> list[Play]:
        """Every legal play of one of ``tiles`` by ``player`` (the turn's player by default)."""
        if self.phase != "playing":
            return []
        player = player or self.turn_player
        assert player is not None
        normal = self.usable_trains(player)
        if not normal and self.players[self._acting_turn(player)] != player:
            return []
        doubles_free = self.rules.doubles_must_be_satisfied and self.owes and not self._handing_over(player)
        doubles_trains = self._free_trains(player) if doubles_free else normal
        plays: list[Play] = []
        top = self.rules.set
        for tile in tiles:
            if tile in self.on_table or not (0 <= tile.low <= top and 0 <= tile.high <= top):
                continue
            for train, end in (doubles_trains if tile.is_double else normal).items():
                if tile.carries(end):
                    plays.append(Play(player, (tile.low, tile.high), train))
        return plays

    def _free_trains(self, player: str) -> dict[str, int]:
        return {
            t: self.end(t) for t in self.trains if not self._first_turn_bars(player, t) and self._is_open_to(player, t)
        }


def replay(rules: Rules, players: Sequence[str], actions: Iterable[Action]) -> Game:
    """A game rebuilt from its accepted actions (each must still be legal)."""
    game = Game(rules, players)
    for action in actions:
        game.push(action)
    return game

