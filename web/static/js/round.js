// The round's ends: "out" or "blocked", the hands counted per seat (by the camera, editable)
// and confirmed as the round's score, and the start of the next round.
import { T, double, esc, roundsTable, send, start, toast } from "./core.js";

let formKey = "";
const edited = new Map(); // player -> what a person typed over the camera's count

function proposedFirst(game) {
  const rule = game.rules ? game.rules.first_player : "told";
  if (rule === "rotate") return game.players[game.rounds.length % game.players.length];
  return null;
}

function playing(game) {
  let last = game.last_play ? game.last_play.player : null;
  if (last && game.hand_counts && game.hand_counts[last] > 0) last = null; // still holds tiles: not out
  return `<section class="card"><h2>${esc(T("round.playing", { engine: double(game.engine) }))}</h2>
    <p class="muted">${esc(T("round.playing-hint"))}</p>
    <p class="buttons">
      ${last ? `<button type="button" id="out" data-player="${esc(last)}">${esc(T("round.out", { name: last }))}</button>` : ""}
      <button type="button" id="blocked" class="ghost">${esc(T("round.blocked"))}</button></p></section>`;
}

// A seat showing fewer tiles than its player holds, or more, was counted wrongly: a person checks that count.
function tilesTag(seen, held) {
  if (seen === undefined || held === undefined || seen === held) return "";
  if (seen < held) return `<span class="tag short">${esc(T("round.tiles-seen", { seen, held }))}</span>`;
  return `<span class="tag over">${esc(T("round.tiles-over", { seen, held }))}</span>`;
}

function scoring(game, counted) {
  const counts = counted ? counted.counts : {};
  const tiles = counted ? counted.tiles || {} : {};
  const held = game.hand_counts || {};
  const rows = game.players.map((p) => {
    if (p === game.went_out) {
      return `<li><label>${esc(p)}</label><span class="fixed">0</span><span class="tag out">${esc(T("scores.out"))}</span></li>`;
    }
    const camera = counts[p] !== undefined;
    const value = edited.has(p) ? edited.get(p) : (camera ? counts[p] : "");
    return `<li><label for="pips-${esc(p)}">${esc(p)}</label>
      <input id="pips-${esc(p)}" name="${esc(p)}" type="number" inputmode="numeric" min="0" max="10000" required value="${esc(value)}">
      ${camera ? `<span class="tag camera" title="${esc(T("round.camera-count", { n: counts[p] }))}">${esc(T("round.camera"))}</span>` : ""}
      ${camera ? tilesTag(tiles[p], held[p]) : ""}</li>`;
  });
  const how = game.went_out ? T("round.went-out", { name: game.went_out }) : T("round.was-blocked");
  return `<section class="card"><h2>${esc(T("round.over", { engine: double(game.engine) }))}</h2>
    <p>${esc(how)}</p><p class="muted">${esc(T(counted ? "round.counted-hint" : "round.count-hint"))}</p>
    <form id="score-form"><ol class="pips">${rows.join("")}</ol>
    <p class="buttons"><button type="submit">${esc(T("round.confirm"))}</button></p></form></section>`;
}

function starting(game) {
  const first = proposedFirst(game);
  const engines = Array.from({ length: game.set + 1 }, (_, v) => game.set - v)
    .map((v) => `<option value="${v}" ${v === game.round ? "selected" : ""}>${double(v)}</option>`).join("");
  const players = game.players.map((p) => `<option ${p === first ? "selected" : ""}>${esc(p)}</option>`).join("");
  const rule = game.rules ? game.rules.first_player : "told";
  return `<section class="card"><h2>${esc(T("round.next", { engine: double(game.round) }))}</h2>
    <p class="muted">${esc(T(`round.first.${rule}`))}</p>
    <form id="start-form" class="grid">
      <label>${esc(T("round.engine"))}<select name="engine">${engines}</select></label>
      <label>${esc(T("round.first"))}<select name="first">${players}</select></label>
      <p class="buttons"><button type="submit">${esc(T("round.start"))}</button></p></form></section>`;
}

function finished(game) {
  const names = game.leaders.join(", ");
  return `<section class="card status"><h2>${esc(T("round.game-over"))}</h2>
    <p class="big">${esc(game.leaders.length > 1 ? T("status.winners", { names }) : T("status.winner", { name: names }))}</p>
    ${game.ended ? "" : `<p class="buttons"><button type="button" id="finish">${esc(T("round.finish"))}</button></p>`}
    <p><a href="/setup">${esc(T("round.new-game"))}</a></p></section>`;
}

function render(m) {
  const game = m.game;
  const el = document.getElementById("round");
  const key = JSON.stringify([game && game.id, game && game.phase, game && game.rounds.length,
    game && game.ended, game && game.last_play, m.counted]);
  if (key === formKey) return;
  formKey = key;
  if (!game) {
    el.innerHTML = `<section class="card empty"><h2>${esc(T("status.no-game"))}</h2>
      <p><a class="button" href="/setup">${esc(T("nav.setup"))}</a></p></section>`;
    return;
  }
  let body;
  if (game.ended || game.game_over) body = finished(game);
  else if (game.phase === "ended") body = scoring(game, m.counted);
  else if (game.phase === "playing") body = playing(game);
  else body = starting(game);
  el.innerHTML = `${body}<section class="card"><h2>${esc(T("scores.rounds"))}</h2>${roundsTable(game)}</section>`;
}

document.getElementById("round").addEventListener("input", (e) => {
  if (e.target.matches(".pips input")) edited.set(e.target.name, e.target.value);
});

document.getElementById("round").addEventListener("submit", async (e) => {
  e.preventDefault();
  const form = e.target;
  if (form.id === "score-form") {
    const hands = {};
    for (const input of form.querySelectorAll("input")) {
      if (input.value === "") {
        input.focus();
        toast(T("round.missing", { name: input.name }), true);
        return;
      }
      hands[input.name] = Number(input.value);
    }
    const result = await send("/api/actions", { act: "score", hands });
    if (result.ok) {
      edited.clear();
      toast(T("round.scored"));
    }
  } else if (form.id === "start-form") {
    const result = await send("/api/actions", { act: "start", engine: Number(form.engine.value), first: form.first.value });
    if (result.ok) toast(T("round.started"));
  }
});

document.getElementById("round").addEventListener("click", async (e) => {
  const target = e.target.closest("button");
  if (!target || target.type === "submit") return;
  if (target.id === "out") {
    await send("/api/actions", { act: "out", player: target.dataset.player });
  } else if (target.id === "blocked") {
    await send("/api/actions", { act: "blocked" });
  } else if (target.id === "finish") {
    const result = await send("/api/game/end");
    if (result.ok) toast(T("round.finished"));
  }
});

start(render);
