"""The table: the one place where actions from the camera, the button and the phones meet
the rules engine, the stored game and the bus.

An action is judged first, stored (committed) second and published third, so whatever a
phone or an LED has been told survives a power cut.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import Any

from scorekeeper import MEXICAN, Action, Code, Draw, Game, GameState, IllegalPlay, Out, Pass, Play, rules_from_spec
from scorekeeper.store import Store

from .bus import EventBus
from .events import (
    ActionApplied,
    ActionUndone,
    Alert,
    AlertCleared,
    GameEnded,
    GameOpened,
    IllegalAction,
)


def _after_a_missed_play(game: Game, action: Action, error: IllegalPlay) -> bool:
    """Whether a press is refused only as a play the camera missed would make it: a draw or pass out of
    turn, or going out after a last tile the hub has not seen."""
    if isinstance(action, (Draw, Pass)):
        return error.code is Code.NOT_YOUR_TURN
    if not isinstance(action, Out) or error.code is not Code.NOT_OVER:
        return False
    # their last tile unseen (it is still their turn: after a double, or the tile not yet recorded), or
    # someone's turn unseen before it; not a tile missed turns ago, which no question about this turn finds
    return game.turn_player == action.player or game.last_player != action.player


class NoGame(RuntimeError):
    """An action arrived while no game is set up."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of submitting an action: accepted (``error`` None) or refused."""

    action: Action
    error: IllegalPlay | None
    seq: int | None = None
    alert: Alert | None = None
    waiting: bool = False  # out of turn by the hub's count, held while the camera catches up (``Table.hold_presses``)

    @property
    def ok(self) -> bool:
        return self.error is None


class Table:
    """The live game at one table. Thread-safe: the camera loop, the button and web requests share it."""

    def __init__(self, store: Store, bus: EventBus) -> None:
        self.store = store
        self.bus = bus
        self._lock = threading.RLock()
        self._alert_ids = itertools.count(1)
        self.alerts: dict[int, Alert] = {}
        self.game_id: int | None = None
        self.rules_spec: Any = None
        self.game: Game | None = None
        self._holding = False
        self._waiting: list[tuple[Action, str]] = []

    # ------------------------------------------------------------ lifecycle
    def resume(self) -> bool:
        """Reopen the newest unfinished game from the store; False when there is none."""
        with self._lock:
            game_id = self.store.current_game_id()
            if game_id is None:
                return False
            stored = self.store.load(game_id)
            self.game_id, self.rules_spec, self.game = game_id, stored.rules_spec, stored.replay()
            self._forget_live()
            state = self.game.state()
        self.bus.publish(GameOpened(game_id, state))
        return True

    def new_game(self, rules_spec: Any, players: list[str] | tuple[str, ...]) -> GameState:
        """End any open game and start a new one (RulesError/ValueError name what is wrong)."""
        game = Game(rules_from_spec(rules_spec), players)
        with self._lock:
            if self.game_id is not None:
                self.store.end_game(self.game_id)
            self.game_id = self.store.new_game(rules_spec, players)
            self.rules_spec, self.game = rules_spec, game
            self._forget_live()
            state = game.state()
            game_id = self.game_id
        self.bus.publish(GameOpened(game_id, state))
        return state

    def end_game(self) -> GameState:
        with self._lock:
            game, game_id = self._need_game()
            self.store.end_game(game_id)
            state = game.state()
            self.game_id, self.game = None, None
            self._forget_live()
        self.bus.publish(GameEnded(game_id, state))
        return state

    def _forget_live(self) -> None:
        """What belongs to the game that was open, not to the stored one: its alerts and waiting presses."""
        self.alerts.clear()
        self._waiting = []

    def _need_game(self) -> tuple[Game, int]:
        if self.game is None or self.game_id is None:
            raise NoGame("no game is set up: start one first")
        return self.game, self.game_id

    # -------------------------------------------------------------- actions
    def state(self) -> GameState | None:
        with self._lock:
            return None if self.game is None else self.game.state()

    def check(self, action: Action) -> IllegalPlay | None:
        with self._lock:
            game, _ = self._need_game()
            return game.check(action)

    def hold_presses(self, on: bool) -> list[Verdict]:
        """While a camera watches, a draw or pass refused as out of turn waits instead of alerting, and
        so does going out after a last tile the hub has not seen.

        By the hub's count it is someone else's turn, but the camera may have missed a play, or
        be asking which tile was just laid: judged now, the press would be a false alarm. The
        camera's reconciler re-judges what waits after each play (``retry_presses``) and asks the
        table what it missed. Turning the hold off (no camera, or the table said nothing was
        missed) judges what waited in order, and a press still refused then raises an alert,
        since the phone that pressed was told only to wait. They wait in memory only.
        """
        with self._lock:
            self._holding = on
        return [] if on else self.release_presses()

    def release_presses(self) -> list[Verdict]:
        """Judge the presses that wait, in order, without holding any again (a refused one alerts)."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
        return [self.submit(action, source, hold=False) for action, source in waiting]

    def retry_presses(self) -> list[Verdict]:
        """Judge the presses that wait again after the game moved on: those still out of turn wait on."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
            verdicts = [self.submit(action, source) for action, source in waiting]
        return [v for v in verdicts if not v.waiting]

    def waiting_presses(self) -> tuple[Action, ...]:
        with self._lock:
            return tuple(action for action, _ in self._waiting)

    def submit(self, action: Action, source: str, alert: bool = True, hold: bool = True) -> Verdict:
        """Judge an action; store and publish it when legal, raise an alert when not (``hold_presses``)."""
        with self._lock:
            game, game_id = self._need_game()
            error = game.check(action)
            if error is not None and hold and self._holding and _after_a_missed_play(game, action, error):
                self._waiting.append((action, source))
                return Verdict(action, error, waiting=True)
            if error is None:
                seq = self.store.append(game_id, action)
                game.push(action)
                event = ActionApplied(game_id, seq, action, source, game.state())
                verdict = Verdict(action, None, seq)
            elif alert:
                new_alert = self._alert_for(action, error)
                self.alerts[new_alert.id] = new_alert
                event = IllegalAction(new_alert, source)
                verdict = Verdict(action, error, alert=new_alert)
            else:
                return Verdict(action, error)
        self.bus.publish(event)
        return verdict

    def _alert_for(self, action: Action, error: IllegalPlay) -> Alert:
        player = getattr(action, "player", None)
        train = action.train if isinstance(action, Play) and isinstance(action.train, str) else None
        if train is not None and self.game is not None and train not in (*self.game.players, MEXICAN):
            train = None
        return Alert(next(self._alert_ids), player, action, error.code.value, error.message, train)

    def clear_alert(self, alert_id: int, reason: str = "taken-back") -> bool:
        with self._lock:
            found = self.alerts.pop(alert_id, None) is not None
        if found:
            self.bus.publish(AlertCleared(alert_id, reason))
        return found

    def undo(self, source: str, waiting_first: bool = True) -> Action | None:
        """Take back the newest press still waiting (``hold_presses``), or else remove the last stored
        action and rebuild the game without it.

        A press that waits is newer than anything stored: a player who pressed "draw" twice while the
        camera was catching up and then "undo" means that second press, not the play before it.
        The camera's own corrections (``waiting_first=False``) always take back the stored action.
        """
        cleared: list[int] = []
        with self._lock:
            game, game_id = self._need_game()
            if waiting_first and self._waiting:
                action, _ = self._waiting.pop()
                state = game.state()
            else:
                undone = self.store.undo(game_id)
                if undone is None:
                    return None
                action = undone
                self.game = self.store.load(game_id).replay()
                state = self.game.state()
                cleared = list(self.alerts)
                self.alerts.clear()
        for alert_id in cleared:
            self.bus.publish(AlertCleared(alert_id, "undo"))
        self.bus.publish(ActionUndone(game_id, action, source, state))
        return action
