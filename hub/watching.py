"""Watching a filmed synthetic game through the whole hub, and judging what it saw against the truth.

The frames go through the same pipeline as at a real table (reader, tracker, reconciler,
Table). The players' button and phone presses recorded with the game are fed in at
their frames; when the camera asks a question, the answer a player at the table would
give is taken from the game's truth, and counted. What the hub observed is compared
with what really happened. ``domino-hub watch``, ``domino-hub eval hub`` and the
end-to-end tests all use this.

A watch given a store keeps the game in SQLite and a journal beside it, so a watch
killed at any moment (``SIGKILL``) and started again resumes the same game.
"""

from __future__ import annotations

import difflib
import json
import os
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hub.pipeline import FrameReader, Pipeline
    from hub.reconciler import PendingQuestion
    from hub.table import Verdict
    from vision.frames import FrameSource
    from vision.synth.game import FrameTruth, PlayerInput


# ------------------------------------------------------------------ recordings
class Recording:
    """A filmed game: frames, per-frame truth, the players' inputs and the true table log."""

    players: tuple[str, ...]
    rules_spec: Any
    fps: float

    def frames(self) -> FrameSource:
        raise NotImplementedError

    def truth(self, index: int) -> FrameTruth:
        raise NotImplementedError

    def inputs_at(self, index: int) -> Sequence[PlayerInput]:
        raise NotImplementedError

    def table_log(self) -> dict[str, Any]:
        raise NotImplementedError

    def first_truth(self) -> FrameTruth:
        """The first frame's truth, before the hub starts watching (the host's slot map comes from it)."""
        raise NotImplementedError


class LiveRecording(Recording):
    """A SyntheticSource rendered on demand (no files): what the tests and ``eval hub`` use."""

    def __init__(self, source: Any) -> None:
        self.source = source
        source.open()
        game = source.game
        self.players, self.rules_spec, self.fps = game.players, game.rules_spec, game.timing.fps
        self.frame_count = game.frame_count

    def frames(self) -> FrameSource:
        return self.source

    def truth(self, index: int) -> FrameTruth:
        return self.source.truth(index)

    def inputs_at(self, index: int) -> Sequence[PlayerInput]:
        return self.source.inputs_at(index)

    def table_log(self) -> dict[str, Any]:
        return self.source.table_log()

    def first_truth(self) -> FrameTruth:
        return self.source.game.render(0)[1]

    def game_inputs(self) -> Sequence[PlayerInput]:
        """Every recorded press of the game, in order."""
        return self.source.game.inputs


class FolderRecording(Recording):
    """A folder written by ``domino-hub synth game`` (frames/, truth.jsonl, inputs.json, table-log.json, game.json)."""

    def __init__(self, path: Path) -> None:
        from scorekeeper.tablelog import parse_action
        from vision.synth.game import PlayerInput

        self.path = path
        try:
            meta = json.loads((path / "game.json").read_text(encoding="utf-8"))
            raw_inputs = json.loads((path / "inputs.json").read_text(encoding="utf-8"))
            self._log = json.loads((path / "table-log.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"{path} is not a synthetic game folder (`domino-hub synth game --out`): {e}") from None
        self.players = tuple(meta["players"])
        self.rules_spec = meta["rules"]
        self.fps = float(meta["fps"])
        self._inputs: dict[int, list[PlayerInput]] = {}
        for i, raw in enumerate(raw_inputs):
            action = None if raw["action"] is None else parse_action(raw["action"], f"inputs.json[{i}].action")
            inp = PlayerInput(int(raw["frame"]), float(raw["time"]), raw["act"], raw["player"], raw["via"], action,
                              bool(raw.get("mistaken", False)))
            self._inputs.setdefault(inp.frame, []).append(inp)
        self._truth_lines: Iterator[str] | None = None
        self._truth: dict[int, FrameTruth] = {}
        self.frame_count = int(meta["frames"])  # the whole game's, even when fewer frames were written

    def frames(self) -> FrameSource:
        from hub.sources import ReplaySource

        return ReplaySource(self.path / "frames", fps=self.fps)

    def truth(self, index: int) -> FrameTruth:
        from vision.synth.game import FrameTruth
        from vision.synth.truth import HubTruth, SlotTruth, TileTruth

        if self._truth_lines is None:
            self._truth_lines = iter((self.path / "truth.jsonl").open(encoding="utf-8"))
        while index not in self._truth:
            line = next(self._truth_lines, None)
            if line is None:
                raise KeyError(f"truth.jsonl has no frame {index}")
            d = json.loads(line)
            hub = d.get("hub")
            hub_truth = None if hub is None else HubTruth(
                tuple(hub["center"]), float(hub["radius"]),
                tuple(SlotTruth(s["number"], s["train"], tuple(s["point"]), tuple(s["outward"])) for s in hub["slots"]),
            )
            tiles = tuple(TileTruth.from_json(t) for t in d["tiles"])
            frame = FrameTruth(d["frame"], d["time"], tiles, (), hub_truth, d["event"], d["steps"], ())
            self._truth[d["frame"]] = frame
            for old in [k for k in self._truth if k < index - 64]:
                del self._truth[old]
        return self._truth[index]

    def inputs_at(self, index: int) -> Sequence[PlayerInput]:
        return self._inputs.get(index, ())

    def table_log(self) -> dict[str, Any]:
        return self._log

    def first_truth(self) -> FrameTruth:
        return self.truth(0)


def out_of_view(game: Any) -> str | None:
    """Why the filmed table cannot be fully seen, or None.

    The renderer's camera is meant to see the whole table, but a long train can run past
    the frame's edge, and a train can be laid over a player's row of tiles (which no real
    table allows: tiles do not lie on one another), hiding tiles that must be counted at
    the end. No camera can judge a tile it cannot see, so such a game measures the
    renderer, not the hub. Judged from the game's truth alone, never from what the hub saw.
    """
    steps = game.table_log()["steps"]
    plays = sum(1 for s in steps if s["act"] == "play" and "expect" not in s)
    h, w = int(game.camera.height), int(game.camera.width)
    last = max(0, min(i.frame for i in game.inputs if i.act in ("out", "blocked")) - 1)
    _, truth = game.render(last)
    laid = [t for t in truth.tiles if t.train not in (None, "engine") and t.face == "up"]
    for t in laid:
        if _in_frame(t.corners, w, h) < 0.45:
            return f"{t.train}'s tile {t.position} lies outside the frame"
    if len(laid) < plays:
        return f"{plays - len(laid)} laid tile(s) lie wholly outside the frame"
    counted = [i.frame for i in game.inputs if i.act == "score"]
    if counted:
        _, truth = game.render(max(0, counted[0] - 1))
        tiles = [t for t in truth.tiles if not t.held]
        for t in tiles:
            if t.owner is not None and t.face == "up" and t.visible < 0.8 and _covered(t, tiles) > 0.1:
                return f"{t.owner}'s tile {t.values[0]}|{t.values[1]} lies partly under another tile at the count"
    return None


def _covered(tile: Any, tiles: Sequence[Any]) -> float:
    """The share of ``tile`` that other tiles lie on (they overlap, which real tiles cannot)."""
    import cv2
    import numpy as np

    mine = np.asarray(tile.corners, np.float32).reshape(4, 1, 2)
    area = float(cv2.contourArea(mine))
    shared = 0.0
    for other in tiles:
        if other is tile:
            continue
        theirs = np.asarray(other.corners, np.float32).reshape(4, 1, 2)
        overlap, _ = cv2.intersectConvexConvex(mine, theirs)
        shared += float(overlap)
    return shared / max(area, 1e-6)


def _in_frame(corners: Any, w: int, h: int) -> float:
    import numpy as np

    c = np.asarray(corners, np.float64).reshape(4, 2)
    u, v = np.meshgrid(np.linspace(0.05, 0.95, 7), np.linspace(0.05, 0.95, 4))
    u, v = u.ravel()[:, None], v.ravel()[:, None]
    p = (1 - u) * (1 - v) * c[0] + u * (1 - v) * c[3] + u * v * c[2] + (1 - u) * v * c[1]
    ok = (p[:, 0] >= -0.5) & (p[:, 0] <= w - 0.5) & (p[:, 1] >= -0.5) & (p[:, 1] <= h - 0.5)
    return float(ok.mean())


# ------------------------------------------------------------------ comparing
def normal_step(step: Mapping[str, Any]) -> str:
    """A table-log step in one canonical spelling: tiles low first, hands sorted, no state checks."""
    d = {k: v for k, v in step.items() if k != "then"}
    if d.get("act") == "play":
        d["tile"] = sorted(d["tile"])
    if d.get("act") == "score":
        d["hands"] = {p: h if isinstance(h, int) else sorted(sorted(t) for t in h) for p, h in d["hands"].items()}
    if d.get("expect") == "ok":
        del d["expect"]
    return json.dumps(d, sort_keys=True)


@dataclass
class WatchReport:
    """What the hub saw of one game, against what happened."""

    name: str
    frames: int = 0
    seconds: float = 0.0  # wall time spent
    game_seconds: float = 0.0
    true_steps: int = 0
    observed_steps: int = 0
    equal: bool = False
    first_mismatch: str | None = None
    illegal_true: int = 0
    illegal_flagged: int = 0
    false_alerts: int = 0
    false_alert_kinds: dict[str, int] = field(default_factory=dict)  # "draw not-your-turn": count
    flag_delays: list[float] = field(default_factory=list)  # game seconds from the tile lying alone to its alert
    questions: int = 0
    engine_from_phone: int = 0  # rounds started with an engine the camera had not read
    scores_equal: bool = False
    partial: bool = False  # only the first frames were watched
    alerts_left: int = 0  # illegal-play alerts still showing at the end (their tiles were all taken back)
    knocks: int = 0  # times the hub was found moved (the filmed camera never moves)
    input_errors: list[str] = field(default_factory=list)  # presses the hub's game could not take
    error: str | None = None

    @property
    def ok(self) -> bool:
        return (self.error is None and not self.input_errors and self.equal and self.false_alerts == 0
                and (self.scores_equal or self.partial) and (self.alerts_left == 0 or self.partial)
                and self.knocks == 0
                and self.illegal_flagged == self.illegal_true and all(d <= 1.0 for d in self.flag_delays))

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["ok"] = self.ok
        out["flag_delays"] = [round(d, 3) for d in self.flag_delays]
        return out


def compare(report: WatchReport, true_log: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    from scorekeeper import rules_from_spec
    from scorekeeper.tablelog import parse

    t = [normal_step(s) for s in true_log["steps"]]
    o = [normal_step(s) for s in observed["steps"]]
    report.true_steps, report.observed_steps = len(t), len(o)
    report.equal = t == o
    if not report.equal:
        i = next((k for k, (a, b) in enumerate(zip(t, o, strict=False)) if a != b), min(len(t), len(o)))
        report.first_mismatch = (f"step {i}: true {t[i] if i < len(t) else '(end)'}, "
                                 f"observed {o[i] if i < len(o) else '(end)'}")
    matcher = difflib.SequenceMatcher(a=t, b=o, autojunk=False)
    blocks = matcher.get_matching_blocks()
    matched_o = {j for block in blocks for j in range(block.b, block.b + block.size)}
    matched_t = {i for block in blocks for i in range(block.a, block.a + block.size)}
    report.illegal_true = sum('"expect"' in s for s in t)
    report.illegal_flagged = sum('"expect"' in s for i, s in enumerate(t) if i in matched_t)
    false = [observed["steps"][j] for j, s in enumerate(o) if j not in matched_o and '"expect"' in s]
    report.false_alerts = len(false)
    report.false_alert_kinds = dict(Counter(f"{step['act']} {step['expect']['illegal']}" for step in false))
    rules = rules_from_spec(true_log["rules"])

    def round_scores(doc: Mapping[str, Any]) -> list[dict[str, int]]:
        from scorekeeper import Game

        legal = {**doc, "steps": [s for s in doc["steps"] if "expect" not in s]}
        try:
            game = Game(rules, tuple(doc["players"]))
            for step in parse(legal).steps:
                game.push(step.action)
        except Exception:
            return []
        return [dict(r.scores) for r in game.rounds]

    truth_scores = round_scores(true_log)
    report.scores_equal = bool(truth_scores) and truth_scores == round_scores(observed)


# ------------------------------------------------------------------ the journal
class Journal:
    """What a resumed watch needs beyond the store: how far it got, and the illegal attempts it saw.

    One JSON object per line, fsynced, so a SIGKILL loses at most the line being written.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[dict[str, Any]] = []
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    self.entries.append(json.loads(line))
                except ValueError:
                    break  # the line a kill cut short
        self._file = path.open("a", encoding="utf-8")

    def write(self, **entry: Any) -> None:
        self._file.write(json.dumps(entry) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self.entries.append(entry)

    def close(self) -> None:
        self._file.close()


# ------------------------------------------------------------------ watching
def laid_by(true_steps: Sequence[Mapping[str, Any]], done: int) -> dict[tuple[str, int], str]:
    """Who laid the tile lying at each (train, position) once the first ``done`` true steps are done.

    An illegal tile lies where the train's next tile goes until it is taken back, so it is the
    layer of that place until a legal play takes it.
    """
    trains: dict[str, list[str]] = {}
    trying: dict[tuple[str, int], str] = {}
    for step in true_steps[:done]:
        if step["act"] == "start":
            trains, trying = {}, {}
        elif step["act"] == "play":
            laid = trains.setdefault(step["train"], [])
            if "expect" in step:
                trying[(step["train"], len(laid))] = step["player"]
            else:
                laid.append(step["player"])
    return {**trying, **{(t, i): p for t, players in trains.items() for i, p in enumerate(players)}}


def answer_from_truth(pipeline: Pipeline, truth: FrameTruth, true_steps: Sequence[Mapping[str, Any]]) -> str | None:
    """What a player at the table would answer to the camera's open question about a tile or a missed
    play (None: no such question).

    Asked whether a tile was laid by someone, they say someone else laid it when so.
    """
    from hub.reconciler import NONE_OF_THESE, SOMEONE_ELSE
    from scorekeeper import Play

    rec = pipeline.reconciler
    pending = None if rec is None else rec.pending
    if pending is None or pending.kind == "start":
        return None
    if pending.kind == "missed":
        return missed_from_truth(pipeline, pending, truth, true_steps)
    game = pipeline.table.game
    laid = {(t.train, t.position): t.values for t in truth.tiles if t.face == "up" and t.train is not None}
    layers = laid_by(true_steps, truth.steps) if ", laid by " in pending.question.text else {}
    for choice, action in pending.options.items():  # the choice naming the tile that really lies there
        if isinstance(action, Play) and game is not None:
            place = (action.train, len(game.trains.get(action.train, ())))
            values = laid.get(place)
            if values is not None and sorted(values) == sorted(action.tile):
                if layers.get(place, action.player) == action.player:
                    return choice
                return SOMEONE_ELSE if SOMEONE_ELSE in pending.question.choices else NONE_OF_THESE
    values = laid.get((pending.train, pending.index))
    return NONE_OF_THESE if values is None else f"{values[0]}|{values[1]}"  # typed in on the phone


def missed_from_truth(pipeline: Pipeline, pending: PendingQuestion, truth: FrameTruth,
                      true_steps: Sequence[Mapping[str, Any]]) -> str:
    """The play the camera missed, as the table would name it: the true game's next action after those
    the hub has, when that is a play by the player whose turn the hub counts it is. Otherwise (the
    hub's game has gone another way) they cannot name one, and say nothing was missed."""
    from hub.reconciler import NOTHING_MISSED
    from scorekeeper.actions import action_to_json

    game = pipeline.table.game
    assert game is not None
    done = [s for s in true_steps[: truth.steps] if "expect" not in s]
    seen = [normal_step(action_to_json(a)) for a in game.history]
    if len(done) <= len(seen) or [normal_step(s) for s in done[: len(seen)]] != seen:
        return NOTHING_MISSED
    missed = done[len(seen)]
    if missed["act"] != "play" or missed["player"] != game.turn_player:
        return NOTHING_MISSED
    for choice, action in pending.options.items():
        if normal_step(action_to_json(action)) == normal_step(missed):
            return choice
    a, b = missed["tile"]
    return f"{a}|{b} on {missed['train']}"  # typed in on the phone


def host_calibration(truth: FrameTruth, slots_needed: int) -> Any:
    """The hub found by the camera (no truth used; checked on the engine as the game starts), each slot
    given its train as the host would confirm it on the set-up page (the game's own slot map, by direction)."""
    import math

    from hub.calibration import match_slots
    from hub.pipeline import AutoCalibration

    if truth.hub is None:
        raise ValueError("the game's truth has no hub to take the slot map from")
    trains_at = {
        math.degrees(math.atan2(s.outward[1] - s.point[1], s.outward[0] - s.point[0])): s.train
        for s in truth.hub.slots if s.train is not None
    }
    return AutoCalibration(lambda found: match_slots(found, trains_at), slots=max(8, slots_needed))


def watch(
    recording: Recording,
    read: FrameReader,
    name: str = "game",
    store_path: Path | None = None,
    tracker: Any = None,
    reconciler: Any = None,
    stop_after: int | None = None,
    source: FrameSource | None = None,
) -> tuple[WatchReport, dict[str, Any]]:
    """Run one recorded game through the hub; the report and the observed table log.

    ``source`` replaces the recording's own frames (a supervised or faulty camera in the
    tests); ``stop_after`` watches only that many frames, and then only what had happened
    well before the last of them is compared.
    """
    from hub.bus import EventBus
    from hub.pipeline import Answer, Pipeline
    from hub.table import Table
    from scorekeeper.actions import action_to_json
    from scorekeeper.store import Store

    report = WatchReport(name)
    calibration = host_calibration(recording.first_truth(), len(recording.players) + 1)
    store = Store(store_path if store_path is not None else ":memory:")
    table = Table(store, EventBus())
    journal = Journal(store_path.with_name(store_path.name + ".watch")) if store_path is not None else None
    resume_from, skip_inputs = 0, 0
    illegal_steps: list[tuple[int, dict[str, Any]]] = []  # (stored actions before it, step)
    if journal is not None and table.resume():
        resume_from, skip_inputs, illegal_steps = _resume_point(journal, table)
    else:
        table.new_game(recording.rules_spec, list(recording.players))
    pipeline = Pipeline(source or recording.frames(), read, table, calibration, tracker, reconciler, watch_hub=True)
    pipeline.source.open()
    if resume_from:
        _skip_to(pipeline.source, resume_from)
    true_steps = recording.table_log()["steps"]
    laid_at: dict[int, float] = {}  # true illegal step -> game time the player let go of its tile
    flagged_at: list[tuple[float, dict[str, Any]]] = []
    started = time.perf_counter()
    fed = resume_from - 1  # inputs are fed up to this frame
    last = fed
    waiting: list[tuple[int, int, PlayerInput]] = []  # presses held back until the page asks for them

    def stored() -> int:
        assert table.game_id is not None
        return len(table.store.load(table.game_id).actions)

    def note(verdict: Verdict | None, at: float, frame: int) -> None:
        if verdict is None or verdict.ok or verdict.alert is None:
            return
        step = {**action_to_json(verdict.action), "expect": {"illegal": verdict.alert.code}}
        position = stored()
        if (position, step) in illegal_steps:
            return  # seen and journaled before a restart
        illegal_steps.append((position, step))
        flagged_at.append((at, step))
        if journal is not None:
            journal.write(kind="illegal", position=position, step=step, frame=frame)

    try:
        while stop_after is None or report.frames < stop_after:
            frame = pipeline.step()
            if frame is None:
                break
            last = frame.index
            report.frames += 1
            truth = recording.truth(frame.index)
            if truth.event == "withdraw" and truth.steps - 1 not in laid_at:
                laid_at[truth.steps - 1] = truth.time
            for verdict in pipeline.last_verdicts:
                note(verdict, frame.timestamp, frame.index)
            answer = answer_from_truth(pipeline, truth, true_steps)
            if answer is not None:
                report.questions += 1
                pending = pipeline.reconciler.pending
                assert pending is not None
                note(pipeline.apply(Answer(pending.question.id, answer), "phone"), frame.timestamp, frame.index)
                for verdict in pipeline.reconciler.take_released():  # presses that waited for that answer
                    note(verdict, frame.timestamp, frame.index)
            due = [(at, k, inp) for at in range(fed + 1, frame.index + 1)  # a camera that lost frames loses no presses
                   for k, inp in enumerate(recording.inputs_at(at)) if not (at == resume_from and k < skip_inputs)]
            queue, waiting = [*waiting, *due], []
            for at, k, inp in queue:
                # the host answers the page's "who goes first?", asked once the camera has seen the engine;
                # presses after it wait their turn
                held = inp.act == "start" and not asked_who_starts(pipeline)
                if waiting or (held and frame.timestamp < at / recording.fps + 1.5):
                    waiting.append((at, k, inp))
                    continue
                if journal is not None:
                    journal.write(kind="input", frame=at, input=k, stored=stored())
                try:
                    verdict = apply_input(pipeline, inp, report)
                except (RuntimeError, ValueError) as e:  # the hub's game has gone astray from the table's
                    report.input_errors.append(f"frame {at} {inp.act}: {e}")
                    continue
                note(verdict, frame.timestamp, frame.index)
            fed = frame.index
            if journal is not None and not waiting:
                journal.write(kind="frame", frame=frame.index, stored=stored())
    finally:
        pipeline.source.close()
        if journal is not None:
            journal.close()
    report.seconds = time.perf_counter() - started
    report.game_seconds = max(0, last) / recording.fps
    report.alerts_left = len(table.alerts)
    report.knocks = pipeline.knocks
    if pipeline.calibration is None:
        report.error = f"calibration: no hub with {calibration.slots} slots found in any frame"
    observed = _observed_log(table, illegal_steps)
    store.close()
    true_log = recording.table_log()
    if last < recording.frame_count - 1:  # watched part of the game: compare what was surely seen
        upto = recording.truth(max(0, last - int(3 * recording.fps))).steps
        true_log = {**true_log, "steps": true_log["steps"][:upto]}
        observed = {**observed, "steps": observed["steps"][:upto]}
        report.partial = True
    compare(report, true_log, observed)
    true_illegal = [(i, normal_step(s)) for i, s in enumerate(true_log["steps"]) if "expect" in s]
    for at, step in flagged_at:
        key = normal_step(step)
        for i, s in true_illegal:
            if s == key and i in laid_at:
                report.flag_delays.append(max(0.0, at - laid_at[i]))
                true_illegal.remove((i, s))
                break
    return report, observed


def _skip_to(source: FrameSource, index: int) -> None:
    """Carry on from frame ``index`` after a restart."""
    seek = getattr(source, "seek", None)
    if seek is not None:
        seek(index)
        return
    while (frame := source.read()) is not None and frame.index < index - 1:
        pass


def asked_who_starts(pipeline: Pipeline) -> bool:
    pending = None if pipeline.reconciler is None else pipeline.reconciler.pending
    return pending is not None and pending.tile_id is None


def apply_input(pipeline: Pipeline, inp: PlayerInput, report: WatchReport | None = None) -> Verdict | None:
    """A recorded button or phone press, as the hub receives it (``report`` counts engines given by phone)."""
    from hub.pipeline import ConfirmScore, StartRound, Undo
    from scorekeeper import Start

    if inp.act == "start":
        assert isinstance(inp.action, Start)
        try:
            return pipeline.apply(StartRound(inp.action.first, inp.action.hands), inp.via)
        except ValueError:  # the camera did not read the engine: the host says which it is
            if report is not None:
                report.engine_from_phone += 1
            return pipeline.apply(StartRound(inp.action.first, inp.action.hands, inp.action.engine), inp.via)
    if inp.act == "undo":
        return pipeline.apply(Undo(), inp.via)
    if inp.act == "score":
        return pipeline.apply(ConfirmScore(), inp.via)
    assert inp.action is not None
    return pipeline.apply(inp.action, inp.via)


def _resume_point(journal: Journal, table: Any) -> tuple[int, int, list[tuple[int, dict[str, Any]]]]:
    """Where to carry on after a restart: (frame, inputs of that frame already applied, illegal steps seen)."""
    illegal = [(e["position"], e["step"]) for e in journal.entries if e["kind"] == "illegal"]
    progress = [e for e in journal.entries if e["kind"] in ("frame", "input")]
    if not progress:
        return 0, 0, illegal
    last = progress[-1]
    if last["kind"] == "frame":
        return last["frame"] + 1, 0, illegal
    stored = len(table.store.load(table.game_id).actions)
    applied = stored != last["stored"]  # an input that changed the store went through before the kill
    return last["frame"], last["input"] + (1 if applied else 0), illegal


def _observed_log(table: Any, illegal_steps: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """The stored (accepted) actions with the illegal attempts seen between them, in order."""
    from scorekeeper.actions import action_to_json

    stored = table.store.load(table.game_id)
    steps: list[dict[str, Any]] = []
    pending = sorted(illegal_steps, key=lambda p: p[0])
    k = 0
    for i, action in enumerate(stored.actions):
        while k < len(pending) and pending[k][0] <= i:
            if pending[k][0] == i:
                steps.append(pending[k][1])
            k += 1
        steps.append(action_to_json(action))
    steps += [s for pos, s in pending[k:] if pos >= len(stored.actions)]
    return {"rules": stored.rules_spec, "players": list(stored.players), "steps": steps}


def truth_reader(recording: Recording, top: int) -> FrameReader:
    from hub.truth_reader import TruthReader

    return TruthReader(lambda frame: recording.truth(frame.index).tiles, top=top)


def model_reader(models: Path | None, threads: int, top: int) -> FrameReader:
    """The real vision stage (raises vision.onnx_session.ModelMissingError when the models are absent)."""
    from hub.pipeline import hub_reader

    return hub_reader(top, models, threads)
