"""A filmed synthetic game: its table log passes the rules checker, its inputs and frames tell the same story."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hub.cli import main
from scorekeeper import Tile
from vision.frames import FrameSource
from vision.synth.game import GameTiming, SyntheticGame
from vision.synth.source import SyntheticGameSource

SMALL = {"rules": {"preset": "classic", "set": 6}, "width": 320, "height": 240}


@pytest.fixture(scope="module")
def game() -> SyntheticGame:
    return SyntheticGame(4, players=3, illegal_rate=0.3, undo_rate=0.5, **SMALL)


def test_the_table_log_passes_rules_check(game: SyntheticGame, tmp_path: Path) -> None:
    log = game.table_log()
    path = tmp_path / "table-log.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    assert main(["rules", "check", str(path)]) == 0
    acts = [s["act"] for s in log["steps"]]
    assert acts[0] == "start" and acts[-1] == "score"
    assert any("expect" in s for s in log["steps"]), "illegal attempts appear with their expected verdict"
    assert all(s["expect"]["illegal"] for s in log["steps"] if "expect" in s)


def test_several_rounds_and_presets_pass_rules_check(tmp_path: Path) -> None:
    for seed, rules, players in ((1, "cardinal", 4), (2, "dominos-cc", 2)):
        g = SyntheticGame(seed, players=players, rules=rules, rounds=2, width=160, height=120, illegal_rate=0.2)
        path = tmp_path / f"{rules}.json"
        path.write_text(json.dumps(g.table_log()), encoding="utf-8")
        assert main(["rules", "check", str(path)]) == 0
        assert sum(s["act"] == "score" for s in g.table_log()["steps"]) == 2


def test_inputs_match_the_log(game: SyntheticGame) -> None:
    steps = game.table_log()["steps"]
    inputs = game.inputs
    frames = [i.frame for i in inputs]
    assert frames == sorted(frames) and frames[0] >= 0 and frames[-1] < game.frame_count
    real = [i for i in inputs if not i.mistaken and i.act != "undo"]
    for act in ("pass", "draw", "out", "blocked", "score"):
        assert sum(i.act == act for i in real) == sum(s["act"] == act for s in steps), act
    mistaken = [i for i in inputs if i.mistaken]
    undos = [i for i in inputs if i.act == "undo"]
    assert len(mistaken) == len(undos) >= 1
    for m in mistaken:  # each mistaken press is followed by an undo from the same player
        assert any(u.frame > m.frame and u.player == m.player for u in undos)


def test_frame_timing_is_explicit_and_tiles_lie_still(game: SyntheticGame) -> None:
    t = game.timing
    assert game.time_of(10) == pytest.approx(10 / t.fps)
    plan = game.timeline
    steps = game.table_log()["steps"]
    checked = 0
    for k, step in enumerate(steps):
        if step["act"] != "play" or "expect" in step:
            continue
        placed = next(i for i, f in enumerate(plan) if f.steps > k)  # the frame the tile goes down
        assert plan[placed].hands, "a hand lays every tile"
        free = next(i for i in range(placed, len(plan)) if not plan[i].hands)
        quiet = 0
        while free + quiet < len(plan) and not plan[free + quiet].hands \
                and plan[free + quiet].version == plan[free].version:
            quiet += 1
        assert quiet >= t.frames(t.still_s), f"play {k}: only {quiet} quiet frames after it"
        checked += 1
    assert checked >= 5


def test_frames_show_the_game(game: SyntheticGame) -> None:
    image, first = game.render(0)
    assert image.shape == (240, 320, 3)
    assert first.event == "deal" and first.steps == 0
    assert all(t.face == "down" for t in first.tiles), "before the engine, only dealt and boneyard tiles lie there"
    last_image, last = game.render(game.frame_count - 1)
    score = game.table_log()["steps"][-1]
    for player, hand in score["hands"].items():
        shown = sorted(Tile.of(*t.values) for t in last.tiles if t.owner == player)
        assert shown == sorted(Tile.of(*v) for v in hand), f"{player} lays out the tiles the score counts"
        assert all(t.face == "up" for t in last.tiles if t.owner == player)
    trains: dict[str, list] = {}
    for t in last.tiles:
        if t.position is not None:
            trains.setdefault(t.train, []).append(t)
    engine = [t for t in last.tiles if t.train == "engine"]
    assert len(engine) == 1
    for name, ts in trains.items():
        ts.sort(key=lambda t: t.position)
        assert [t.position for t in ts] == list(range(len(ts))), f"train {name} is not contiguous"
        assert ts[0].values[0] == engine[0].values[0]
        for a, b in zip(ts, ts[1:], strict=False):
            assert a.values[1] == b.values[0]
    faces = [(min(t.values), max(t.values)) for t in last.tiles]
    assert len(faces) == len(set(faces))


def test_a_reaching_hand_is_in_the_truth(game: SyntheticGame) -> None:
    i = next(k for k, f in enumerate(game.timeline) if f.hands)
    _, truth = game.render(i)
    assert any(p.kind == "hand" for p in truth.props)


def test_the_same_seed_films_the_same_game() -> None:
    a = SyntheticGame(9, players=2, **SMALL)
    b = SyntheticGame(9, players=2, **SMALL)
    assert a.table_log() == b.table_log()
    assert a.frame_count == b.frame_count
    i = a.frame_count // 2
    assert np.array_equal(a.render(i)[0], b.render(i)[0])


def test_the_game_is_a_frame_source() -> None:
    source = SyntheticGameSource(seed=3, players=2, timing=GameTiming(fps=2.0), **SMALL)
    assert isinstance(source, FrameSource)
    with source:
        frames = []
        for frame in source:
            frames.append(frame)
            if len(frames) == 5:
                break
        assert [f.index for f in frames] == [0, 1, 2, 3, 4]
        assert [f.timestamp for f in frames] == [0.0, 0.5, 1.0, 1.5, 2.0]
        assert frames[0].image.shape == (240, 320, 3)
        assert source.truth is not None and source.truth.index == 4
        assert source.table_log()["steps"][0]["act"] == "start"


def test_the_source_paces_itself_by_game_time() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    source = SyntheticGameSource(seed=3, players=2, speed=2.0, sleep=sleep, clock=lambda: now[0],
                                 timing=GameTiming(fps=4.0), **SMALL)
    with source:
        for _ in range(3):
            source.read()
    assert slept == pytest.approx([0.125, 0.125])


def test_slots_can_be_given_and_are_checked() -> None:
    g = SyntheticGame(2, players=["Ana", "Ben"], slots={1: "Ana", 2: "Ben", 8: "mexican"}, **SMALL)
    _, truth = g.render(0)
    assert truth.hub is not None
    assert {s.number: s.train for s in truth.hub.slots if s.train} == {1: "Ana", 2: "Ben", 8: "mexican"}
    with pytest.raises(ValueError, match="missing mexican"):
        SyntheticGame(2, players=["Ana", "Ben"], slots={1: "Ana", 2: "Ben"}, **SMALL)


def test_cli_writes_scenes_and_games(tmp_path: Path) -> None:
    assert main(["synth", "scenes", "--n", "2", "--seed", "5", "--out", str(tmp_path / "s"), "--width", "320",
                 "--height", "240"]) == 0
    truth = json.loads((tmp_path / "s" / "scene-000005.json").read_text())
    assert truth["width"] == 320 and isinstance(truth["tiles"], list)
    assert (tmp_path / "s" / "scene-000006.jpg").stat().st_size > 0
    out = tmp_path / "g"
    assert main(["synth", "game", "--seed", "3", "--players", "2", "--out", str(out), "--width", "320", "--height",
                 "240", "--limit", "6"]) == 0
    assert len(list((out / "frames").iterdir())) == 6
    assert len((out / "truth.jsonl").read_text().splitlines()) == 6
    assert main(["rules", "check", str(out / "table-log.json")]) == 0
    meta = json.loads((out / "game.json").read_text())
    assert meta["fps"] == 4.0 and meta["frames"] > 6


@pytest.mark.parametrize("seed", [5000, 5004, 5006])
def test_laid_tiles_stay_on_the_table_and_off_the_players_tiles(seed: int) -> None:
    """Seeds whose trains once ran off the table, or over a player's row before a drawn tile was put
    there: every train tile lies on the table, nothing lies on a player's tiles, and the hub's
    end-to-end check finds the whole game in view."""
    import cv2

    from hub.watching import out_of_view

    g = SyntheticGame(seed, width=320, height=240)
    before_count = min(i.frame for i in g.inputs if i.act == "score") - 1
    layout = g.layout_at(before_count)
    t, d = g.table, g.dims
    laid = [p for p in layout.pieces if p.train not in (None, "engine")]
    assert len(laid) == sum(1 for s in g.table_log()["steps"] if s["act"] == "play" and "expect" not in s)
    for p in laid:
        c = p.footprint(d)
        assert (c[:, 0] >= t.x0).all() and (c[:, 0] <= t.x1).all() and (c[:, 1] >= t.y0).all() and (
            c[:, 1] <= t.y1).all(), f"{p.train}'s tile {p.position} lies off the table"
    rows = [p for p in layout.pieces if p.owner is not None]
    assert rows and all(p.face == "up" for p in rows)  # laid out for the count
    others = [p for p in layout.pieces if p.owner is None]
    for mine in rows:
        for other in others:
            shared, _ = cv2.intersectConvexConvex(mine.footprint(d).astype(np.float32),
                                                  other.footprint(d).astype(np.float32))
            assert shared < 0.02 * d.length * d.width, f"{mine.owner}'s tile {mine.values} lies under a tile"
    assert out_of_view(g) is None


@pytest.mark.parametrize("seed", [101, 113])
def test_train_tiles_never_lie_over_other_tiles(seed: int) -> None:
    """Seeds whose trains once grew over other trains once the table filled up: a tile with no room
    is not played (the player draws or passes), so no laid tile, legal or taken back, ever lies on
    another -- the camera could not read a tile that real players would never stack."""
    import cv2

    g = SyntheticGame(seed, width=320, height=240)
    d = g.dims
    area = d.length * d.width
    checked = set()
    for pieces, _ in g._versions:
        down = [p for p in pieces if not p.held]
        for p in (p for p in down if p.train not in (None, "engine")):
            for q in down:
                if q is p or q.train == "engine" or (id(p), id(q)) in checked:
                    continue
                checked.add((id(p), id(q)))
                shared, _ = cv2.intersectConvexConvex(p.footprint(d).astype(np.float32),
                                                      q.footprint(d).astype(np.float32))
                assert shared < 0.08 * area, f"{p.train}'s {p.values} lies over {q.train or q.owner}'s {q.values}"
