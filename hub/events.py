"""The typed events that travel on the bus. The web page, the LEDs and the logs read only these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

from scorekeeper import Action, GameState


@dataclass(frozen=True)
class Alert:
    """An illegal action seen at the table, shown until it is taken back."""

    id: int
    player: str | None
    action: Action
    code: str
    message: str
    train: str | None  # the train the offending tile was laid on, if any

    @property
    def text(self) -> str:
        return f"{self.player}: {self.message}" if self.player else self.message


@dataclass(frozen=True)
class GameOpened:
    game_id: int
    state: GameState


@dataclass(frozen=True)
class ActionApplied:
    game_id: int
    seq: int
    action: Action
    source: str  # "camera", "button", "web", ...
    state: GameState


@dataclass(frozen=True)
class ActionUndone:
    game_id: int
    action: Action
    source: str
    state: GameState


@dataclass(frozen=True)
class IllegalAction:
    alert: Alert
    source: str


@dataclass(frozen=True)
class AlertCleared:
    alert_id: int
    reason: str  # "taken-back", "undo", "dismissed", "new-round"


@dataclass(frozen=True)
class GameEnded:
    game_id: int
    state: GameState


@dataclass(frozen=True)
class CameraStatus:
    status: str  # "ok", "starting", "reconnecting", "lost", "knocked"
    detail: str = ""


@dataclass(frozen=True)
class Question:
    """The camera is unsure; a person picks one of ``choices`` on a phone."""

    id: int
    text: str
    choices: tuple[str, ...]
    typed: bool = False  # a tile typed ``a|b`` is an answer too (the camera may not have seen the right one)


@dataclass(frozen=True)
class QuestionClosed:
    id: int
    answer: str | None


@dataclass(frozen=True)
class HandCounts:
    """Pips counted per seat by the camera at the end of a round, for the table to confirm, and the tiles
    counted there: a seat showing fewer or more than its player holds is flagged on the page for a person to check."""

    counts: Mapping[str, int]
    tiles: Mapping[str, int] = field(default_factory=dict)


Event = Union[
    GameOpened, ActionApplied, ActionUndone, IllegalAction, AlertCleared, GameEnded,
    CameraStatus, Question, QuestionClosed, HandCounts,
]
