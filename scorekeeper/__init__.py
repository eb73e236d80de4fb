"""The rules engine, scoring and the stored game: pure Mexican Train, no cameras or pins."""

from .actions import MEXICAN, Action, Blocked, Draw, Out, Pass, Play, Score, Start
from .errors import Code, IllegalPlay
from .game import Game, IncompleteScore, replay, train_label
from .rules import PRESETS, Rules, RulesError, preset, rules_from_spec
from .state import GameState, LastPlay, OpenDouble, PlacedTile, RoundResult
from .tiles import SUPPORTED_SETS, Tile, full_set, set_size

__all__ = [
    "MEXICAN", "PRESETS", "SUPPORTED_SETS",
    "Action", "Blocked", "Code", "Draw", "Game", "GameState", "IllegalPlay", "IncompleteScore",
    "LastPlay", "OpenDouble", "Out", "Pass", "PlacedTile", "Play", "RoundResult", "Rules", "RulesError",
    "Score", "Start", "Tile",
    "full_set", "preset", "replay", "rules_from_spec", "set_size", "train_label",
]
