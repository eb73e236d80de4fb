"""The one error the rules engine raises, with the table log's verdict codes."""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    """Verdict codes from the table-log spec, in the order they take precedence."""

    ROUND_OVER = "round-over"
    UNKNOWN_PLAYER = "unknown-player"
    UNKNOWN_TRAIN = "unknown-train"
    BAD_TILE = "bad-tile"
    NOT_YOUR_TURN = "not-your-turn"
    DUPLICATE_TILE = "duplicate-tile"
    MUST_FOLLOW_DOUBLE = "must-follow-double"
    OPEN_DOUBLE = "open-double"
    TRAIN_CLOSED = "train-closed"
    NO_MATCH = "no-match"
    NOT_OVER = "not-over"


class IllegalPlay(Exception):
    """An action the rules forbid. ``code`` is machine-readable, ``message`` is for players."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"IllegalPlay({self.code.value!r}, {self.message!r})"
