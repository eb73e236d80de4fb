"""Rule options and the three presets from ``shared/spec/rules.md``.

Every preset is just a bundle of options; a table may override any one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

from .tiles import SUPPORTED_SETS, set_size


class RulesError(ValueError):
    """A rule option that cannot be used; ``key`` names the option at fault."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key


CLASSIC_HANDS = {
    12: {2: 16, 3: 16, 4: 15, 5: 14, 6: 12, 7: 10, 8: 9},
    9: {2: 15, 3: 13, 4: 10},
}
CARDINAL_HANDS = {4: 15, 5: 12, 6: 12, 7: 10, 8: 10, 9: 8, 10: 8}

FIRST_PLAYER = ("rotate", "engine-holder", "told")
FIRST_TURN = ("one", "many")
DOUBLES = ("satisfy", "follow")
CLOSE_DOUBLES = ("order", "reverse")


def _frozen(d: Mapping[int, int]) -> Mapping[int, int]:
    return MappingProxyType(dict(d))


@dataclass(frozen=True)
class Rules:
    """Every option the engine enforces. Build one with :func:`preset` and :meth:`with_options`."""

    preset: str = "classic"
    set: int = 12
    min_players: int = 2
    max_players: int = 8
    hand_sizes: Mapping[int, int] = field(default_factory=lambda: _frozen(CLASSIC_HANDS[12]))
    engines: tuple[int, ...] = tuple(range(12, -1, -1))
    first_player: str = "told"
    first_turn: str = "one"
    doubles: str = "satisfy"
    close_doubles: str = "order"
    double_blank: int = 50
    positive_scoring: bool = False
    no_foreign_trains_first_turn: bool = False

    def __post_init__(self) -> None:
        if self.set not in SUPPORTED_SETS:
            raise RulesError("set", f"must be one of {', '.join(map(str, SUPPORTED_SETS))}, not {self.set}")
        if not 2 <= self.min_players <= self.max_players:
            raise RulesError("max_players", "player range must be at least 2 and not empty")
        for name, allowed in (
            ("first_player", FIRST_PLAYER),
            ("first_turn", FIRST_TURN),
            ("doubles", DOUBLES),
            ("close_doubles", CLOSE_DOUBLES),
        ):
            if getattr(self, name) not in allowed:
                raise RulesError(name, f"must be one of {', '.join(allowed)}, not {getattr(self, name)!r}")
        if not self.engines:
            raise RulesError("engines", "at least one round is needed")
        for e in self.engines:
            if not 0 <= e <= self.set:
                raise RulesError("engines", f"engine {e} is not in a double-{self.set} set")
        if self.double_blank < 0:
            raise RulesError("double_blank", "must not be negative")
        for players, size in self.hand_sizes.items():
            if size < 0 or players * size > set_size(self.set) - 1:
                raise RulesError("hand_sizes", f"{players} hands of {size} do not fit a double-{self.set} set")

    @property
    def doubles_must_be_satisfied(self) -> bool:
        return self.doubles == "satisfy"

    def hand_size(self, players: int) -> int:
        """Tiles dealt to each player, per the preset's table or a fair share of the set."""
        if players in self.hand_sizes:
            return self.hand_sizes[players]
        share = (set_size(self.set) - 1) * 11 // (20 * players)
        return max(1, min(16, share))

    def check_players(self, count: int) -> None:
        if not self.min_players <= count <= self.max_players:
            raise RulesError(
                "players",
                f"{self.preset} is for {self.min_players}-{self.max_players} players, not {count}",
            )

    def with_options(self, options: Mapping[str, Any]) -> Rules:
        """A copy with some options overridden; unknown keys and wrong types raise RulesError."""
        known = {f.name: f for f in fields(self)}
        changes: dict[str, Any] = {}
        for key, value in options.items():
            if key == "preset":
                continue
            if key not in known:
                raise RulesError(key, "is not a rule option")
            changes[key] = _coerce(key, value)
        if "set" in changes and "engines" not in changes:
            changes["engines"] = _default_engines(self.preset, changes["set"])
        if "set" in changes and "hand_sizes" not in changes:
            changes["hand_sizes"] = _default_hands(self.preset, changes["set"])
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["hand_sizes"] = {str(k): v for k, v in self.hand_sizes.items()}
        out["engines"] = list(self.engines)
        return out


def _coerce(key: str, value: Any) -> Any:
    if key in ("positive_scoring", "no_foreign_trains_first_turn"):
        if not isinstance(value, bool):
            raise RulesError(key, "must be true or false")
        return value
    if key in ("set", "min_players", "max_players", "double_blank"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise RulesError(key, "must be a whole number")
        return value
    if key == "engines":
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise RulesError(key, "must be a list of whole numbers")
        return tuple(value)
    if key == "hand_sizes":
        if not isinstance(value, Mapping):
            raise RulesError(key, "must map a player count to a hand size")
        out: dict[int, int] = {}
        for k, v in value.items():
            try:
                players = int(k)
            except (TypeError, ValueError):
                raise RulesError(key, f"{k!r} is not a player count") from None
            if isinstance(v, bool) or not isinstance(v, int):
                raise RulesError(key, f"hand size for {players} players must be a whole number")
            out[players] = v
        return _frozen(out)
    if not isinstance(value, str):
        raise RulesError(key, "must be a string")
    return value


def _default_engines(preset_name: str, n: int) -> tuple[int, ...]:
    last = max(0, n - 5) if preset_name == "dominos-cc" else 0
    return tuple(range(n, last - 1, -1))


def _default_hands(preset_name: str, n: int) -> Mapping[int, int]:
    if preset_name == "cardinal" and n == 12:
        return _frozen(CARDINAL_HANDS)
    if preset_name == "dominos-cc" and n == 12:
        return _frozen({2: 15, 3: 15, 4: 15})
    return _frozen(CLASSIC_HANDS.get(n, {}))


PRESETS: dict[str, Rules] = {
    "dominos-cc": Rules(
        preset="dominos-cc",
        min_players=2,
        max_players=4,
        hand_sizes=_frozen({2: 15, 3: 15, 4: 15}),
        engines=_default_engines("dominos-cc", 12),
        first_player="rotate",
        double_blank=0,
    ),
    "cardinal": Rules(
        preset="cardinal",
        min_players=4,
        max_players=10,
        hand_sizes=_frozen(CARDINAL_HANDS),
        first_player="engine-holder",
        first_turn="many",
        doubles="follow",
        double_blank=0,
    ),
    "classic": Rules(),
}


def preset(name: str) -> Rules:
    try:
        return PRESETS[name]
    except KeyError:
        raise RulesError("preset", f"unknown preset {name!r}; use one of {', '.join(PRESETS)}") from None


def rules_from_spec(spec: str | Mapping[str, Any]) -> Rules:
    """Rules from a table log's ``rules`` field: a preset name or ``{"preset": ..., **overrides}``."""
    if isinstance(spec, str):
        return preset(spec)
    if not isinstance(spec, Mapping):
        raise RulesError("rules", "must be a preset name or an object with a preset")
    name = spec.get("preset", "classic")
    if not isinstance(name, str):
        raise RulesError("preset", "must be a string")
    rules = preset(name).with_options(spec)
    if name == "classic" and rules.set == 9 and "max_players" not in spec:
        rules = replace(rules, max_players=4)
    return rules
