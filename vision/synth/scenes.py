"""Independent random scenes for training: ``render_scene(seed, width, height, **options)``.

Three kinds of table, drawn by seed:

- ``table``: a round in progress, played by the rules engine's random players up to a random
  moment: the hub with its engine, trains, markers on passed trains, a face-down boneyard and
  sometimes the hands laid out face up for counting;
- ``hands``: tiles laid out in rows and clusters for counting, no hub;
- ``loose``: tiles scattered face up and down, some in short touching chains.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, fields

import numpy as np

from scorekeeper import MEXICAN, Play, Tile, full_set, preset
from scorekeeper.simulate import Simulator, random_players

from .camera import CameraSpec, sample_camera
from .layout import ZONE_ID, Builder, Hub, Layout, Piece, Prop, Table, TileDims, make_hub, place_seats, rect
from .palette import PIP_FAMILIES, TileStyle, sample_style
from .photometric import sample_degrade, sample_lighting
from .props import make_hand
from .render import Look, Renderer
from .sprites import SpriteCache
from .surfaces import KINDS, sample_surface
from .truth import Scene

SCENE_KINDS = ("table", "hands", "loose")
SETS = (6, 9, 12, 15, 18)
TILT_MAX_DEG = 65.0  # the most a scene's camera may tilt from straight down


@dataclass(frozen=True)
class SceneOptions:
    """What a caller may pin down; everything left as None is drawn from the seed."""

    kind: str | None = None  # "table" | "hands" | "loose"
    clean: bool = False  # no occluders, glare, blur, noise or JPEG; mild light
    set: int | None = None  # double-N set: 6, 9, 12, 15 or 18
    tile_px: tuple[float, float] = (40.0, 400.0)  # tile length range at the image centre
    tilt_max_deg: float = 20.0
    tilt_min_deg: float = 0.0  # above 0, no camera looks straight down
    distortion: bool = True
    surface: str | None = None  # one of surfaces.KINDS
    occluders: bool | None = None  # hands, cups and phones (None: by chance; never when clean)
    pips: str | None = None  # pip colouring, one of palette.PIP_FAMILIES

    def __post_init__(self) -> None:
        if self.kind is not None and self.kind not in SCENE_KINDS:
            raise ValueError(f"kind must be one of {', '.join(SCENE_KINDS)}, not {self.kind!r}")
        if self.set is not None and self.set not in SETS:
            raise ValueError(f"set must be one of {', '.join(map(str, SETS))}, not {self.set!r}")
        if self.pips is not None and self.pips not in PIP_FAMILIES:
            raise ValueError(f"pips must be one of {', '.join(PIP_FAMILIES)}, not {self.pips!r}")
        if self.surface is not None and self.surface not in KINDS:
            raise ValueError(f"surface must be one of {', '.join(KINDS)}, not {self.surface!r}")
        lo, hi = self.tile_px
        if not 8 <= lo <= hi:
            raise ValueError(f"tile_px must be (low, high) with 8 <= low <= high, not {self.tile_px!r}")
        if not 0 <= self.tilt_max_deg <= TILT_MAX_DEG:
            raise ValueError(f"tilt_max_deg must be within 0..{TILT_MAX_DEG:g}, not {self.tilt_max_deg!r}")
        if not 0 <= self.tilt_min_deg <= self.tilt_max_deg:
            raise ValueError(f"tilt_min_deg must be within 0..tilt_max_deg ({self.tilt_max_deg:g}), "
                             f"not {self.tilt_min_deg!r}")


def scene_options(options: dict[str, object]) -> SceneOptions:
    known = {f.name for f in fields(SceneOptions)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"unknown scene option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    opts = dict(options)
    if isinstance(opts.get("tile_px"), (int, float)):
        opts["tile_px"] = (float(opts["tile_px"]), float(opts["tile_px"]))  # type: ignore[arg-type]
    elif "tile_px" in opts:
        opts["tile_px"] = tuple(float(v) for v in opts["tile_px"])  # type: ignore[union-attr]
    return SceneOptions(**opts)  # type: ignore[arg-type]


_SPRITES = SpriteCache(size=4)


def render_scene(seed: int, width: int = 1280, height: int = 960, **options: object) -> Scene:
    """One random table scene, the same pixels for the same seed and options."""
    if width < 64 or height < 48:
        raise ValueError(f"frames must be at least 64x48, not {width}x{height}")
    opts = scene_options(options)
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, int(seed) >> 32 & 0xFFFFFFFF, 2027])
    kind = opts.kind or str(rng.choice(SCENE_KINDS, p=[0.6, 0.22, 0.18]))
    max_value = opts.set or int(rng.choice(SETS, p=[0.08, 0.12, 0.56, 0.12, 0.12]))
    style = sample_style(rng, max_value, opts.pips)
    dims = tile_dims(rng, style)
    occluders = (not opts.clean) and (opts.occluders if opts.occluders is not None else rng.random() < 0.55)
    if kind == "table":
        layout, focus = table_layout(rng, dims, max_value, clean=opts.clean)
    elif kind == "hands":
        layout, focus = hands_layout(rng, dims, max_value, clean=opts.clean)
    else:
        layout, focus = loose_layout(rng, dims, max_value, clean=opts.clean)
    spec = CameraSpec(opts.tile_px, opts.tilt_max_deg, opts.distortion, tilt_min_deg=opts.tilt_min_deg)
    camera = sample_camera(rng, width, height, focus, dims.length, spec)
    if occluders:
        add_occluders(rng, layout, camera.height_mm)
    surface = sample_surface(rng, opts.surface)
    lighting = sample_lighting(rng, layout.table.center, opts.clean)
    floor = tuple(int(v) for v in rng.integers(15, 70, 3))
    look = Look(style, surface, lighting, floor)  # type: ignore[arg-type]
    faults = sample_degrade(rng, opts.clean, scale=max(width, height) / 1280)
    renderer = Renderer(camera, look, dims, _SPRITES)
    out = renderer.render(layout, rng, faults)
    info = {
        "surface": surface.kind, "set": max_value, "scheme": style.scheme, "divider": style.divider_kind,
        "spinner": style.spinner is not None, "tilt_deg": round(camera.tilt_deg, 2), "k1": round(camera.k1, 4),
        "tile_px": round(dims.length * camera.px_per_mm, 1), "jpeg": faults.jpeg_quality,
        "noise": round(faults.noise, 2), "focus_sigma": round(faults.focus_sigma, 2), "clean": opts.clean,
    }
    return Scene(out.image, out.tiles, int(seed), kind, out.hub, out.props, camera.truth(), info)


def tile_dims(rng: np.random.Generator, style: TileStyle) -> TileDims:
    length = float(rng.uniform(44.0, 56.0)) if style.max_value <= 12 else float(rng.uniform(40.0, 50.0))
    width = length / style.aspect
    return TileDims(length, width, width * style.thickness)


# ---------------------------------------------------------------- layouts
def _table(rng: np.random.Generator, dims: TileDims, players: int) -> Table:
    k = dims.length / 50.0
    w = rng.uniform(900, 1400) * k * (1 + 0.04 * max(0, players - 4))
    h = rng.uniform(800, 1200) * k * (1 + 0.04 * max(0, players - 4))
    return Table(-w / 2, -h / 2, w / 2, h / 2)


def _assign_slots(hub: Hub, table: Table, names: list[str]) -> dict[str, int]:
    """Each player's train starts from the free slot that points most nearly at their seat."""
    free = list(range(1, len(hub.slot_angles) + 1))
    out: dict[str, int] = {}
    for name in names:
        if name in table.seats:
            edge, _ = table.seats[name]
            target = math.atan2(edge[1] - hub.center[1], edge[0] - hub.center[0])
            best = min(free, key=lambda k: abs(math.remainder(hub.slot_angles[k - 1] - target, 2 * math.pi)))
        else:
            best = free[len(free) // 2]
        free.remove(best)
        out[name] = best
    return out


def _simulate(rng: np.random.Generator, max_value: int, players: int, progress: float) -> Simulator:
    """A round of random legal play, stopped ``progress`` of the way (1.0: played to its end, unscored)."""
    rules = preset("classic")
    if max_value != 12:
        rules = rules.with_options({"set": max_value, "max_players": 8})
    sim = Simulator(rules, random_players(players), random.Random(int(rng.integers(1 << 62))))
    steps = sim.round_steps()
    next(steps)  # the deal
    total_tiles = sum(len(h) for h in sim.hands.values())
    stop_at = int(progress * total_tiles * 0.9)
    for step in steps:
        if step.action.act in ("out", "blocked"):
            break
        if sum(1 for a in sim.game.history if isinstance(a, Play)) >= stop_at and progress < 1.0:
            break
    return sim


def table_layout(rng: np.random.Generator, dims: TileDims, max_value: int, clean: bool) -> tuple[Layout, np.ndarray]:
    players = int(rng.integers(2, 5 if max_value <= 6 else 9))
    progress = float(rng.uniform(0.0, 1.0)) if rng.random() < 0.8 else 1.0
    sim = _simulate(rng, max_value, players, progress)
    game = sim.game
    table = _table(rng, dims, players)
    hub_c = table.center + rng.normal(0, 0.03, 2) * [table.x1 - table.x0, table.y1 - table.y0]
    trains = [*game.players, MEXICAN]
    hub = make_hub(hub_c, dims, rng, slots=max(8, len(trains)))
    layout = Layout(table, dims, hub)
    place_seats(table, list(game.players), float(rng.uniform(0, 1)))
    slots = _assign_slots(hub, table, list(game.players))
    free = [k for k in range(1, len(hub.slot_angles) + 1) if k not in slots.values()]
    slots[MEXICAN] = free[int(rng.integers(len(free)))]
    names = {t: f"slot{slots[t]}" for t in trains}
    hub.trains = {slots[t]: names[t] for t in trains}
    b = Builder(layout, rng, doubles_across=bool(rng.random() < 0.6))
    laid_out = progress >= 1.0 or rng.random() < 0.2
    for p in game.players:  # keep the seats' counting zones and a boneyard corner clear of trains
        edge, inward = table.seats[p]
        zone_c = edge + np.array([math.cos(inward), math.sin(inward)]) * dims.length * 1.3
        b.reserve_zone(rect(zone_c, inward + math.pi / 2, dims.length * 7, dims.length * 2.2))
    bone_dir = float(rng.uniform(0, 2 * math.pi))
    span = 0.5 * min(table.x1 - table.x0, table.y1 - table.y0)
    bone_c = hub_c + np.array([math.cos(bone_dir), math.sin(bone_dir)]) * span * rng.uniform(0.55, 0.75)
    bone_r = dims.length * (0.6 + 0.5 * math.sqrt(max(1, len(sim.boneyard))))
    b.occ.mark_disc(bone_c, bone_r + dims.length * 0.5, ZONE_ID)
    engine = game.engine if game.engine is not None else max_value
    angle = float(rng.uniform(0, 2 * math.pi))
    b.add(Piece((engine, engine), hub.center.copy(), angle, "up", train="engine"), mark=False)
    for t in trains:
        b.start_train(names[t], slots[t])
    count = dict.fromkeys(trains, 0)
    for action in game.history:
        if isinstance(action, Play):
            placed = game.trains[action.train][count[action.train]]
            count[action.train] += 1
            b.next_on(names[action.train], (placed.inner, placed.outer))
    token_kind = "train-token" if rng.random() < 0.6 else "coin"
    for p in (p for p in game.players if p in game.markers):  # seat order: a set's order changes per process
        _marker(b, hub, slots[p], names[p], token_kind, rng)
    if sim.boneyard:
        b.occ.grid[b.occ.grid == ZONE_ID] = 0
        b.scatter([(t.low, t.high) for t in sim.boneyard], bone_c, bone_r, "down", overlap_share=0.0 if clean else 0.12)
    for p in game.players:
        edge, inward = table.seats[p]
        hand = [(t.low, t.high) for t in sim.hands[p]]
        if not hand:
            continue
        origin = edge + np.array([math.cos(inward), math.sin(inward)]) * dims.length * (0.75 if laid_out else 0.6)
        if laid_out:
            b.row(hand, origin, inward + math.pi / 2, "up", p, upright=bool(rng.random() < 0.6))
        elif rng.random() < 0.25:
            b.row(hand, origin, inward + math.pi / 2, "down", p, upright=True, gap=1.5)
    for _ in range(0 if clean else int(rng.integers(0, 3))):  # stray coins, wherever they fell
        pos = np.array([rng.uniform(table.x0 + 60, table.x1 - 60), rng.uniform(table.y0 + 60, table.y1 - 60)])
        layout.props.append(_coin(rng, pos))
    focus = hub.center if rng.random() < 0.4 else layout.pieces[int(rng.integers(len(layout.pieces)))].center
    return layout, np.asarray(focus) + rng.normal(0, dims.length * 0.3, 2)


def _marker(b: Builder, hub: Hub, slot: int, train: str, kind: str, rng: np.random.Generator) -> None:
    start, a = hub.slot_start(slot)
    d = np.array([math.cos(a), math.sin(a)])
    n = np.array([-d[1], d[0]]) * (1 if rng.random() < 0.5 else -1)
    dims = b.layout.dims
    pos = start + d * (hub.radius - hub.slot_inner + dims.length * 0.25) + n * (dims.width / 2 + 12)
    if kind == "coin":
        prop = _coin(rng, pos)
    else:
        colours = [(40, 40, 200), (200, 80, 30), (40, 160, 40), (30, 200, 230), (160, 40, 160), (20, 20, 20)]
        prop = Prop("train-token", pos, a + float(rng.normal(0, 0.3)), (30.0, 13.0), 15.0,
                    colours[int(rng.integers(len(colours)))], accent=(30, 30, 30))
    prop.train = train
    b.layout.props.append(prop)


def _coin(rng: np.random.Generator, pos: np.ndarray) -> Prop:
    metals = [(60, 110, 190), (190, 190, 195), (80, 170, 215), (150, 150, 150)]
    d = float(rng.uniform(17, 27))
    return Prop("coin", np.asarray(pos, np.float64), 0.0, (d, d), 2.0, metals[int(rng.integers(len(metals)))])


def _random_tiles(rng: np.random.Generator, max_value: int, n: int) -> list[tuple[int, int]]:
    tiles: list[Tile] = full_set(max_value)
    idx = rng.permutation(len(tiles))[:n]
    out = []
    for i in idx:
        t = tiles[int(i)]
        out.append((t.low, t.high) if rng.random() < 0.5 else (t.high, t.low))
    return out


def hands_layout(rng: np.random.Generator, dims: TileDims, max_value: int, clean: bool) -> tuple[Layout, np.ndarray]:
    table = _table(rng, dims, 4)
    layout = Layout(table, dims)
    b = Builder(layout, rng, doubles_across=False)
    n_total = min(len(full_set(max_value)), int(rng.integers(4, 30)))
    tiles = _random_tiles(rng, max_value, n_total)
    groups = int(rng.integers(1, 4))
    per = max(1, len(tiles) // groups)
    centres = []
    for g in range(groups):
        part = tiles[g * per:(g + 1) * per] if g < groups - 1 else tiles[g * per:]
        if not part:
            continue
        c = table.center + rng.normal(0, 1, 2) * dims.length * 2.5
        centres.append(c)
        if rng.random() < 0.7:
            b.row(part, c, float(rng.uniform(0, 2 * math.pi)), "up", f"seat{g + 1}", upright=bool(rng.random() < 0.6),
                  gap=float(rng.uniform(0.5, 8)), jitter=float(rng.uniform(0.5, 4)))
        else:
            b.scatter(part, c, dims.length * (0.8 + 0.35 * math.sqrt(len(part))), "up", f"seat{g + 1}")
    if rng.random() < 0.4:
        pile = _random_tiles(rng, max_value, int(rng.integers(2, 10)))
        where = table.center + rng.normal(0, 1, 2) * dims.length * 3
        b.scatter(pile, where, dims.length * 2, "down", overlap_share=0.0 if clean else 0.15)
    focus = centres[int(rng.integers(len(centres)))] if centres else table.center
    return layout, focus + rng.normal(0, dims.length * 0.4, 2)


def loose_layout(rng: np.random.Generator, dims: TileDims, max_value: int, clean: bool) -> tuple[Layout, np.ndarray]:
    table = _table(rng, dims, 4)
    layout = Layout(table, dims)
    b = Builder(layout, rng, doubles_across=bool(rng.random() < 0.5))
    pool = _random_tiles(rng, max_value, min(len(full_set(max_value)), int(rng.integers(6, 45))))
    used: set[tuple[int, int]] = set()
    for c in range(int(rng.integers(0, 4))):  # short chains, touching end to end with matching ends
        start = table.center + rng.normal(0, 1, 2) * dims.length * 3
        name = f"chain{c + 1}"
        b.start_free(name, start, float(rng.uniform(0, 2 * math.pi)))
        value = int(rng.integers(0, max_value + 1))
        for _ in range(int(rng.integers(2, 6))):
            nxt = [t for t in full_set(max_value) if t.carries(value) and (t.low, t.high) not in used]
            if not nxt:
                break
            t = nxt[int(rng.integers(len(nxt)))]
            used.add((t.low, t.high))
            b.next_on(name, (value, t.other(value)))
            value = t.other(value)
    rest = [v for v in pool if (min(v), max(v)) not in used]
    face_down_share = float(rng.uniform(0, 0.5))
    up = [v for v in rest if rng.random() >= face_down_share]
    down = [v for v in rest if v not in up]
    spread = dims.length * (1.5 + 0.45 * math.sqrt(len(rest)))
    b.scatter(up, table.center, spread, "up", overlap_share=0.0 if clean else 0.08)
    b.scatter(down, table.center, spread, "down", overlap_share=0.0 if clean else 0.15)
    for p in layout.pieces:
        if p.train and p.train.startswith("chain"):
            p.train, p.position = None, None  # a chain on the table is not a train from the hub
    focus = layout.pieces[int(rng.integers(len(layout.pieces)))].center if layout.pieces else table.center
    return layout, np.asarray(focus) + rng.normal(0, dims.length * 0.5, 2)


# ------------------------------------------------------------- occluders
def add_occluders(rng: np.random.Generator, layout: Layout, camera_height: float) -> None:
    """Hands reaching in, cups and phones, as tall as the camera's height allows."""
    table, dims = layout.table, layout.dims
    targets = [p.center for p in layout.pieces] or [table.center]
    if rng.random() < 0.6:
        for _ in range(int(rng.integers(1, 3))):
            target = targets[int(rng.integers(len(targets)))] + rng.normal(0, dims.length * 0.6, 2)
            layout.props.append(make_hand(rng, layout.table, target, camera_height))
    if rng.random() < 0.35 and camera_height > 250:
        pos = targets[int(rng.integers(len(targets)))] + rng.normal(0, dims.length * 2, 2)
        cups = [(235, 235, 235), (40, 40, 40), (40, 60, 170), (170, 120, 40), (60, 150, 200)]
        drinks = [(20, 40, 70), (30, 60, 110), (150, 180, 200), (20, 20, 25)]
        layout.props.append(Prop("cup", pos, float(rng.uniform(0, 2 * math.pi)), (float(rng.uniform(70, 90)),) * 2,
                                 float(rng.uniform(80, min(110, camera_height * 0.35))),
                                 cups[int(rng.integers(len(cups)))], accent=drinks[int(rng.integers(len(drinks)))]))
    if rng.random() < 0.3:
        pos = targets[int(rng.integers(len(targets)))] + rng.normal(0, dims.length * 2, 2)
        cases = [(20, 20, 20), (60, 40, 30), (150, 60, 40), (200, 200, 210), (40, 40, 120)]
        screens = [(15, 15, 15), (40, 30, 25), (120, 90, 60)]
        layout.props.append(Prop("phone", pos, float(rng.uniform(0, 2 * math.pi)), (150.0, 73.0), 9.0,
                                 cases[int(rng.integers(len(cases)))], accent=screens[int(rng.integers(len(screens)))]))
