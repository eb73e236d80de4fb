// The live board: the hub with the engine, one lane per train (the Mexican train last), each
// with its open end, marker and open double; the last play and any illegal play stand out.
import { T, double, esc, gameStatus, send, start, toast, trainName } from "./core.js";

const W = 360;          // viewBox width; the SVG scales to the phone
const HUB_W = 60;       // the hub, down the left side
const LX = 72;          // where the trains start
const LANE = 68;        // lane height
const S = 22;           // half a tile
const GAP = 4;
const END_W = 28;

function half(x, y, value, cls = "") {
  return `<text class="pip v${value % 19} ${cls}" x="${x + S / 2}" y="${y + S / 2 + 5}">${value}</text>`;
}

function drawTile(x, cy, inner, outer, classes) {
  if (inner === outer) { // doubles lie crosswise
    const y = cy - S;
    return `<g class="tile double ${classes}"><rect x="${x}" y="${y}" width="${S}" height="${2 * S}" rx="4"/>
      <line x1="${x + 3}" y1="${cy}" x2="${x + S - 3}" y2="${cy}"/>${half(x, y, inner)}${half(x, cy, outer)}</g>`;
  }
  const y = cy - S / 2;
  return `<g class="tile ${classes}"><rect x="${x}" y="${y}" width="${2 * S}" height="${S}" rx="4"/>
    <line x1="${x + S}" y1="${y + 3}" x2="${x + S}" y2="${y + S - 3}"/>${half(x, y, inner)}${half(x + S, y, outer)}</g>`;
}

const widthOf = (t) => (t[0] === t[1] ? S : 2 * S);
const sameTile = (a, b) => a && b && Math.min(...a) === Math.min(...b) && Math.max(...a) === Math.max(...b);

function lane(game, train, index, y, alert, fresh) {
  const cy = y + 44;
  const isTurn = train.owner && train.owner === game.turn;
  const parts = [`<g class="lane ${isTurn ? "turn" : ""} ${alert ? "has-alert" : ""}" data-train="${esc(train.name)}">`];
  parts.push(`<rect class="lane-bg" x="${LX - 6}" y="${y + 2}" width="${W - LX + 4}" height="${LANE - 4}" rx="8"/>`);
  // the slot on the hub and its spoke
  parts.push(`<line class="spoke" x1="${HUB_W - 6}" y1="${cy}" x2="${LX - 6}" y2="${cy}"/>`);
  parts.push(`<circle class="slot" cx="${HUB_W - 6}" cy="${cy}" r="9"/><text class="slot-no" x="${HUB_W - 6}" y="${cy + 4}">${train.owner ? index + 1 : "M"}</text>`);
  // label: name, marker, open double
  let lx = LX;
  const mexican = T("train.mexican");
  const label = train.owner ? train.owner : mexican.charAt(0).toUpperCase() + mexican.slice(1);
  parts.push(`<text class="lane-label" x="${lx}" y="${y + 17}">${isTurn ? "▶ " : ""}${esc(label)}</text>`);
  lx += Math.min(160, (label.length + (isTurn ? 2 : 0)) * 8 + 10);
  if (train.marker) {
    parts.push(`<g class="marker"><circle cx="${lx + 6}" cy="${y + 12}" r="6"/><text x="${lx + 16}" y="${y + 17}">${esc(T("board.marker"))}</text></g>`);
    lx += 22 + T("board.marker").length * 7;
  }
  if (train.open_double !== null && train.open_double !== undefined) {
    parts.push(`<text class="open-label" x="${lx}" y="${y + 17}">${esc(T("board.open-double", { tile: double(train.open_double) }))}</text>`);
  }
  // tiles: as many of the newest as fit, then the open end
  const tiles = train.tiles;
  const room = W - LX - END_W - GAP - (alert ? 2 * S + GAP : 0);
  let used = 0;
  let first = tiles.length;
  while (first > 0 && used + widthOf(tiles[first - 1]) + GAP <= room - (first > 1 ? 30 : 0)) {
    first -= 1;
    used += widthOf(tiles[first]) + GAP;
  }
  let x = LX;
  if (first > 0) {
    parts.push(`<g class="more"><rect x="${x}" y="${cy - 10}" width="26" height="20" rx="10"/><text x="${x + 13}" y="${cy + 4}">+${first}</text></g>`);
    x += 30;
  }
  const last = game.last_play;
  tiles.slice(first).forEach((t, i) => {
    const isLast = first + i === tiles.length - 1;
    const classes = [];
    if (isLast && last && last.train === train.name && sameTile(t, last.tile)) classes.push("last", fresh ? "fresh" : "");
    if (isLast && t[0] === t[1] && train.open_double === t[0]) classes.push("open");
    parts.push(drawTile(x, cy, t[0], t[1], classes.join(" ")));
    x += widthOf(t) + GAP;
  });
  if (train.end !== null && train.end !== undefined) {
    parts.push(`<g class="end"><rect x="${x}" y="${cy - 12}" width="${END_W - 4}" height="24" rx="5"/><text x="${x + (END_W - 4) / 2}" y="${cy + 5}">${train.end}</text></g>`);
    x += END_W;
  }
  if (alert && alert.tile) {
    parts.push(drawTile(x, cy, alert.tile[0], alert.tile[1], "illegal"));
    const cx = x + widthOf(alert.tile) - 2;
    const top = cy - (alert.tile[0] === alert.tile[1] ? S : S / 2);
    parts.push(`<g class="cross"><circle cx="${cx}" cy="${top}" r="7"/><text x="${cx}" y="${top + 4}">✕</text></g>`);
  }
  parts.push("</g>");
  return parts.join("");
}

function boardSvg(game, alerts, fresh) {
  const top = 8;
  const height = top + game.trains.length * LANE + 8;
  const alertOn = {};
  for (const a of alerts) if (a.train) alertOn[a.train] = a;
  const lanes = game.trains.map((t, i) => lane(game, t, i, top + i * LANE, alertOn[t.name], fresh));
  const hubMid = top + (game.trains.length * LANE) / 2;
  const engine = game.engine === null ? "" : `
    <g class="tile engine"><rect x="${HUB_W / 2 - 17}" y="${hubMid - 30}" width="26" height="52" rx="5"/>
      <line x1="${HUB_W / 2 - 14}" y1="${hubMid - 4}" x2="${HUB_W / 2 + 6}" y2="${hubMid - 4}"/>
      <text class="pip v${game.engine % 19}" x="${HUB_W / 2 - 4}" y="${hubMid - 11}">${game.engine}</text>
      <text class="pip v${game.engine % 19}" x="${HUB_W / 2 - 4}" y="${hubMid + 15}">${game.engine}</text></g>`;
  return `<svg class="board" viewBox="0 0 ${W} ${height}" role="img" aria-label="${esc(T("board.aria"))}" xmlns="http://www.w3.org/2000/svg">
    <rect class="hub" x="2" y="${top}" width="${HUB_W - 8}" height="${game.trains.length * LANE - 4}" rx="14"/>
    <text class="hub-label" x="${HUB_W / 2 - 4}" y="${top + 16}">${esc(T("board.hub"))}</text>
    ${engine}${lanes.join("")}</svg>`;
}

function render(m, event) {
  const game = m.game;
  const el = document.getElementById("board");
  const status = document.getElementById("board-status");
  if (!game) {
    status.textContent = T("status.no-game");
    el.innerHTML = `<p class="muted">${esc(T("board.empty"))}</p>`;
    renderControls(null);
    return;
  }
  status.textContent = gameStatus(game);
  const fresh = event && event.type === "applied" && event.action && event.action.act === "play";
  const alerts = m.alerts || [];
  const notes = [];
  if (game.phase === "idle" && !game.game_over) notes.push(`<a class="button" href="/round">${esc(T("round.start-link"))}</a>`);
  if (game.phase === "ended") notes.push(`<a class="button" href="/round">${esc(T("round.confirm-link"))}</a>`);
  const last = game.last_play
    ? `<p class="muted small" id="last-play">${esc(T("board.last-play", { player: game.last_play.player, tile: `${game.last_play.tile[0]}|${game.last_play.tile[1]}`, train: trainName(game.last_play.train) }))}</p>`
    : "";
  el.innerHTML = `${boardSvg(game, alerts, fresh)}${last}${notes.join("")}`;
  renderControls(game);
}

// ------------------------------------------------------------------ recording by hand
let controlsKey = "";
function renderControls(game) {
  const box = document.getElementById("controls");
  if (!game || game.ended) {
    box.hidden = true;
    controlsKey = "";
    return;
  }
  box.hidden = false;
  const key = `${game.id}|${game.players.join(",")}|${game.set}`;
  const form = box.querySelector("form");
  if (key !== controlsKey) {
    controlsKey = key;
    const players = game.players.map((p) => `<option value="${esc(p)}">${esc(p)}</option>`).join("");
    const trains = [...game.players, "mexican"].map((t) => `<option value="${esc(t)}">${esc(trainName(t))}</option>`).join("");
    const values = Array.from({ length: game.set + 1 }, (_, v) => `<option>${v}</option>`).join("");
    form.player.innerHTML = players;
    form.train.innerHTML = trains;
    form.a.innerHTML = values;
    form.b.innerHTML = values;
  }
  if (game.turn && document.activeElement !== form.player) form.player.value = game.turn;
  const playing = game.phase === "playing";
  for (const b of form.querySelectorAll("[data-act]")) b.disabled = !playing;
}

document.getElementById("controls").addEventListener("click", async (e) => {
  const button = e.target.closest("button[data-act], button[data-undo]");
  if (!button) return;
  e.preventDefault();
  const form = button.form;
  const act = button.dataset.act;
  let result;
  if (button.dataset.undo !== undefined) {
    result = await send("/api/undo");
    if (result.ok) toast(T("board.undone"));
    return;
  }
  if (act === "play") {
    result = await send("/api/actions", {
      act, player: form.player.value, tile: [Number(form.a.value), Number(form.b.value)], train: form.train.value,
    });
  } else if (act === "blocked") {
    result = await send("/api/actions", { act });
  } else {
    result = await send("/api/actions", { act, player: form.player.value });
  }
  if (result.ok) toast(T(result.status === 202 ? "board.waiting" : "board.recorded"));
});

start(render);
