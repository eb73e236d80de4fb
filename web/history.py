"""Past games from the store, each replayed once: an ended game never changes."""

from __future__ import annotations

import threading
from typing import Any

from scorekeeper import rules_from_spec
from scorekeeper.store import Store, StoredGame

from .model import game_json

MAX_LISTED = 50


class History:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._games: dict[tuple[int, bool, int], dict[str, Any]] = {}

    def game(self, game_id: int) -> dict[str, Any]:
        """One stored game as the pages draw it; KeyError when there is no such game."""
        stored = self.store.load(game_id)
        key = (stored.id, stored.ended is not None, len(stored.actions))
        with self._lock:
            cached = self._games.get(key)
        if cached is None:
            cached = self._replay(stored)
            with self._lock:
                if len(self._games) > 4 * MAX_LISTED:
                    self._games.clear()
                self._games[key] = cached
        return cached

    @staticmethod
    def _replay(stored: StoredGame) -> dict[str, Any]:
        rules = rules_from_spec(stored.rules_spec)
        game = game_json(stored.id, stored.replay().state(), rules, ended=stored.ended is not None)
        game.update(created=stored.created, ended_at=stored.ended, rounds_total=len(rules.engines))
        return game

    def games(self) -> list[dict[str, Any]]:
        """The newest games first, each with its totals and winners; unreadable ones are skipped."""
        out = []
        for game_id in reversed(self.store.game_ids()[-MAX_LISTED:]):
            try:
                g = self.game(game_id)
            except Exception:  # a game stored by an older version must not hide the others
                continue
            out.append({
                k: g[k] for k in (
                    "id", "created", "ended", "ended_at", "players", "preset", "scores", "leaders",
                    "game_over", "rounds_total",
                )
            } | {"rounds_played": len(g["rounds"])})
        return out
