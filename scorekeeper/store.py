"""The stored game: an append-only SQLite log of accepted table-log actions.

The state is never stored, only the actions; replaying them through the engine rebuilds
it. WAL mode with ``synchronous=FULL`` makes each append durable at commit, so a power
cut loses nothing that was confirmed and never leaves half an action behind.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .actions import Action, action_to_json
from .game import Game
from .rules import rules_from_spec
from .tablelog import parse_action

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    created REAL NOT NULL,
    rules TEXT NOT NULL,
    players TEXT NOT NULL,
    ended REAL
);
CREATE TABLE IF NOT EXISTS actions (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    at REAL NOT NULL,
    action TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
"""


@dataclass(frozen=True)
class StoredGame:
    id: int
    created: float
    rules_spec: Any
    players: tuple[str, ...]
    actions: tuple[Action, ...]
    ended: float | None

    def replay(self) -> Game:
        """The game as it stands after every stored action."""
        game = Game(rules_from_spec(self.rules_spec), self.players)
        for action in self.actions:
            game.push(action)
        return game

    def table_log(self) -> dict:
        return {
            "rules": self.rules_spec,
            "players": list(self.players),
            "steps": [action_to_json(a) for a in self.actions],
        }


class Store:
    """Games and their actions in one SQLite file, safe to share between threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def new_game(self, rules_spec: Any, players: list[str] | tuple[str, ...]) -> int:
        Game(rules_from_spec(rules_spec), players)  # refuse a game the engine would refuse
        with self._tx() as db:
            cur = db.execute(
                "INSERT INTO games (created, rules, players) VALUES (?, ?, ?)",
                (time.time(), json.dumps(rules_spec), json.dumps(list(players))),
            )
            return int(cur.lastrowid)  # type: ignore[arg-type]

    def append(self, game_id: int, action: Action) -> int:
        """Store one accepted action; returns its sequence number (0-based)."""
        with self._tx() as db:
            (seq,) = db.execute("SELECT COUNT(*) FROM actions WHERE game_id = ?", (game_id,)).fetchone()
            db.execute(
                "INSERT INTO actions (game_id, seq, at, action) VALUES (?, ?, ?, ?)",
                (game_id, seq, time.time(), json.dumps(action_to_json(action))),
            )
            return int(seq)

    def undo(self, game_id: int) -> Action | None:
        """Remove the last action of a game; returns it, or None when there is none."""
        with self._tx() as db:
            row = db.execute(
                "SELECT seq, action FROM actions WHERE game_id = ? ORDER BY seq DESC LIMIT 1", (game_id,)
            ).fetchone()
            if row is None:
                return None
            db.execute("DELETE FROM actions WHERE game_id = ? AND seq = ?", (game_id, row[0]))
            return parse_action(json.loads(row[1]), f"stored action {row[0]}")

    def end_game(self, game_id: int) -> None:
        with self._tx() as db:
            db.execute("UPDATE games SET ended = ? WHERE id = ? AND ended IS NULL", (time.time(), game_id))

    def current_game_id(self) -> int | None:
        """The newest game that has not been ended, if any."""
        with self._lock:
            row = self._db.execute("SELECT id FROM games WHERE ended IS NULL ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else int(row[0])

    def load(self, game_id: int) -> StoredGame:
        with self._lock:
            game = self._db.execute(
                "SELECT id, created, rules, players, ended FROM games WHERE id = ?", (game_id,)
            ).fetchone()
            if game is None:
                raise KeyError(f"no game {game_id}")
            rows = self._db.execute(
                "SELECT seq, action FROM actions WHERE game_id = ? ORDER BY seq", (game_id,)
            ).fetchall()
        actions = tuple(parse_action(json.loads(a), f"stored action {seq}") for seq, a in rows)
        return StoredGame(game[0], game[1], json.loads(game[2]), tuple(json.loads(game[3])), actions, game[4])

    def game_ids(self) -> list[int]:
        with self._lock:
            return [int(r[0]) for r in self._db.execute("SELECT id FROM games ORDER BY id")]
