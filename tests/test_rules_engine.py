"""The rules engine through its Python API: one test per fix made in review, plus the API contract."""

from __future__ import annotations

import json

import pytest

from scorekeeper import (
    Code,
    Draw,
    Game,
    IllegalPlay,
    IncompleteScore,
    Out,
    Pass,
    Play,
    RulesError,
    Score,
    Start,
    Tile,
    full_set,
    preset,
    rules_from_spec,
    tablelog,
)

FOUR = ["Ana", "Ben", "Cy", "Dee"]


def game_after(rules_spec: object, players: list[str], *actions: object) -> Game:
    game = Game(rules_from_spec(rules_spec), players)  # type: ignore[arg-type]
    for action in actions:
        game.push(action)  # type: ignore[arg-type]
    return game


def code(game: Game, action: object) -> Code | None:
    error = game.check(action)  # type: ignore[arg-type]
    return None if error is None else error.code


# ------------------------------------------------------- fixes made in review
def test_first_player_may_use_foreign_trains_again_after_the_last_multi_tile_first_turn() -> None:
    """Was: the hand-over from the last player's first turn counted as Ana's first turn again."""
    game = game_after(
        {"preset": "cardinal", "no_foreign_trains_first_turn": True}, FOUR,
        Start(12, "Ana"), Play("Ana", (12, 5), "Ana"), Play("Ben", (12, 4), "Ben"),
        Play("Cy", (12, 6), "Cy"), Play("Dee", (12, 7), "Dee"),
    )
    assert game.turn_player == "Dee"
    assert code(game, Play("Ana", (12, 3), "mexican")) is None
    assert game.usable_trains("Ana") == {"Ana": 5, "mexican": 12}
    assert Play("Ana", (3, 12), "mexican") in game.legal_plays([Tile(3, 12)], "Ana")
    assert code(game, Play("Ben", (12, 3), "mexican")) == Code.NOT_YOUR_TURN


def test_multi_tile_first_turn_hands_over_only_after_a_tile_was_laid() -> None:
    """Decision: a player who has laid nothing must draw and pass (marker); the next player cannot skip them."""
    game = game_after("cardinal", FOUR, Start(12, "Ana"), Draw("Ana"))
    assert code(game, Play("Ben", (12, 4), "Ben")) == Code.NOT_YOUR_TURN
    assert code(game, Draw("Ben")) == Code.NOT_YOUR_TURN
    assert game.usable_trains("Ben") == {} and game.legal_plays([Tile(4, 12)], "Ben") == []
    game.push(Play("Ana", (12, 5), "Ana"))
    assert code(game, Play("Ben", (12, 4), "Ben")) is None
    assert {p.train for p in game.legal_plays([Tile(4, 12)], "Ben")} == {"Ben", "mexican"}


def test_an_illegal_action_does_not_hand_over_the_first_turn() -> None:
    game = game_after("cardinal", FOUR, Start(12, "Ana"), Play("Ana", (12, 5), "Ana"))
    before = game.state()
    with pytest.raises(IllegalPlay) as caught:
        game.push(Play("Ben", (4, 9), "Ben"))
    assert caught.value.code == Code.NO_MATCH
    assert game.state() == before and game.turn_player == "Ana"
    game.push(Play("Ana", (5, 7), "Ana"))  # Ana's first turn goes on
    assert game.turn_player == "Ana" and game.markers == set()


def test_start_mid_round_reports_unknown_player_and_bad_tile_before_not_over() -> None:
    """Was: not-over for every start during a round, against the spec's precedence order."""
    game = game_after("classic", ["Ana", "Ben"], Start(12, "Ana"))
    assert code(game, Start(11, "Zed")) == Code.UNKNOWN_PLAYER
    assert code(game, Start(11, "Ana", {"Ana": 3, "Zed": 3})) == Code.UNKNOWN_PLAYER
    assert code(game, Start(13, "Ana")) == Code.BAD_TILE
    assert code(game, Start(11, "Ana")) == Code.NOT_OVER


def test_legal_plays_never_lists_a_tile_beyond_the_set() -> None:
    """Was: Tile(3, 13) was offered on a train ending in 3 while check called it bad-tile."""
    game = game_after("classic", ["Ana", "Ben"], Start(12, "Ana"), Play("Ana", (12, 3), "mexican"))
    candidates = [Tile(3, 13), Tile(12, 13), Tile(-1, 3), Tile(3, 4)]
    assert game.legal_plays(candidates, "Ben") == [Play("Ben", (3, 4), "mexican")]
    assert code(game, Play("Ben", (3, 13), "mexican")) == Code.BAD_TILE


# ------------------------------------------------------------- API contract
def test_message_a_player_understands() -> None:
    game = game_after("classic", ["Ana", "Ben"], Start(12, "Ana"), Play("Ana", (12, 6), "Ana"),
                      Play("Ben", (12, 1), "Ben"), Play("Ana", (6, 2), "Ana"))
    game.push(Play("Ben", (1, 6), "Ben"))
    error = game.check(Play("Ana", (4, 9), "Ben"))
    assert error is not None and error.code == Code.TRAIN_CLOSED
    game.push(Pass("Ana"))
    game.push(Draw("Ben"))
    error = game.check(Play("Ben", (4, 9), "Ben"))
    assert error is not None
    assert (error.code, error.message) == (Code.NO_MATCH, "4|9 does not match Ben's train, which ends in 6")


def test_check_changes_nothing() -> None:
    game = game_after("classic", ["Ana", "Ben", "Cy"], Start(12, "Ana"), Play("Ana", (12, 6), "Ana"),
                      Play("Ben", (12, 1), "Ben"), Play("Cy", (12, 3), "Cy"), Play("Ana", (6, 6), "Ana"))
    before = game.state()
    for tile in full_set(12):
        for train in ("Ana", "Ben", "Cy", "mexican"):
            for player in ("Ana", "Ben"):
                game.check(Play(player, (tile.low, tile.high), train))
    for action in (Pass("Ana"), Draw("Ben"), Out("Ben"), Score({"Ben": 1}), Start(11, "Ana")):
        game.check(action)
    assert game.state() == before


def test_score_leaving_out_a_player_is_not_a_verdict_but_an_error() -> None:
    game = game_after("classic", ["Ana", "Ben", "Cy"], Start(12, "Ana"), Play("Ana", (12, 6), "Ana"), Out("Ana"))
    with pytest.raises(IncompleteScore, match="Cy"):
        game.push(Score({"Ben": 4}))
    game.push(Score({"Ben": 4, "Cy": [(0, 0)]}))
    assert dict(game.rounds[-1].scores) == {"Ana": 0, "Ben": 4, "Cy": 50}


def test_state_is_plain_typed_values() -> None:
    game = game_after("classic", ["Ana", "Ben"], Start(12, "Ana"), Play("Ana", (12, 6), "Ana"),
                      Play("Ben", (12, 1), "Ben"), Play("Ana", (6, 6), "Ana"))
    state = game.state()
    assert state.turn == "Ana" and state.owes_follow_up and state.phase == "playing"
    assert [(d.train, d.value) for d in state.open_doubles] == [("Ana", 6)]
    assert [p.tile for p in state.trains["Ana"]] == [Tile(6, 12), Tile(6, 6)]
    assert state.last_play is not None and state.last_play.tile == Tile(6, 6)
    with pytest.raises(TypeError):
        state.trains["Ana"] = ()  # type: ignore[index]


@pytest.mark.parametrize(
    ("spec", "key"),
    [({"preset": "classic", "close_doubles": "sideways"}, "close_doubles"), ({"preset": "nope"}, "preset"),
     ({"preset": "classic", "set": 10}, "set"), ({"preset": "classic", "positive_scoring": "yes"}, "positive_scoring"),
     ({"preset": "classic", "engines": [13]}, "engines"), ({"preset": "classic", "colour": "red"}, "colour")],
)
def test_bad_rule_options_name_the_option(spec: dict[str, object], key: str) -> None:
    with pytest.raises(RulesError) as caught:
        rules_from_spec(spec)
    assert caught.value.key == key


def test_presets_and_option_overrides() -> None:
    assert preset("dominos-cc").engines == (12, 11, 10, 9, 8, 7)
    assert preset("cardinal").hand_size(9) == 8 and preset("classic").hand_size(5) == 14
    nine = rules_from_spec({"preset": "classic", "set": 9})
    assert (nine.max_players, nine.hand_size(3), nine.engines[0], nine.double_blank) == (4, 13, 9, 50)
    assert rules_from_spec({"preset": "dominos-cc", "set": 18}).engines == (18, 17, 16, 15, 14, 13)
    with pytest.raises(RulesError):
        Game(nine, ["A", "B", "C", "D", "E"])


def test_table_log_round_trip_of_a_game() -> None:
    game = game_after("classic", ["Ana", "Ben"], Start(12, "Ana", {"Ana": 2, "Ben": 2}), Play("Ana", (12, 6), "Ana"),
                      Draw("Ben"), Pass("Ben"), Play("Ana", (6, 6), "Ana"), Out("Ana"),
                      Score({"Ben": ((1, 2), (0, 0), (3, 3))}))
    log = tablelog.loads(json.dumps(tablelog.log_of(game, "classic").to_json()))
    assert [s.action for s in log.steps] == game.history
    assert all(r.error is None and not r.mismatch for r in tablelog.check(log))
