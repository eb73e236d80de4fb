// The scoreboard: whose turn it is, running totals with the leaders, and one row per round.
import { T, double, esc, gameStatus, roundsTable, start } from "./core.js";

function render(m) {
  const game = m.game;
  const el = document.getElementById("scoreboard");
  if (!game) {
    el.innerHTML = `<section class="card empty"><h2>${esc(T("status.no-game"))}</h2>
      <p>${esc(T("scores.empty-hint"))}</p>
      <p class="buttons"><a class="button" href="/setup">${esc(T("nav.setup"))}</a>
      <a class="button ghost" href="/join">${esc(T("nav.join"))}</a></p></section>`;
    return;
  }
  const leaders = new Set(game.leaders);
  const played = game.rounds.length;
  const total = game.rules ? game.rules.engines.length : null;
  const totals = game.players.map((p, seat) => {
    const tags = [];
    if (leaders.has(p) && played) tags.push(`<span class="tag lead">${esc(T("scores.leader"))}</span>`);
    if (game.turn === p) tags.push(`<span class="tag turn">${esc(T("scores.turn"))}</span>`);
    if (game.went_out === p) tags.push(`<span class="tag out">${esc(T("scores.out"))}</span>`);
    return `<li class="${game.turn === p ? "is-turn" : ""} ${leaders.has(p) && played ? "is-lead" : ""}" data-player="${esc(p)}">
      <span class="seat">${seat + 1}</span><span class="name">${esc(p)}</span>${tags.join("")}
      <span class="total">${game.scores[p]}</span></li>`;
  });
  const progress = total === null ? "" : T("scores.progress", { played, total });
  el.innerHTML = `
    <section class="card status ${game.phase}">
      <p class="big" id="status-line">${esc(gameStatus(game))}</p>
      <p class="muted">${esc(T(`preset.${game.preset}`))} · ${esc(T("scores.set", { n: game.set }))}${progress ? ` · ${esc(progress)}` : ""}</p>
      ${game.phase === "ended" ? `<p><a class="button" href="/round">${esc(T("round.confirm-link"))}</a></p>` : ""}
    </section>
    <section class="card">
      <h2>${esc(T("scores.totals"))}</h2>
      <ol class="totals">${totals.join("")}</ol>
      <p class="muted small">${esc(T(game.rules && game.rules.positive_scoring ? "scores.highest-wins" : "scores.lowest-wins"))}</p>
    </section>
    <section class="card">
      <h2>${esc(T("scores.rounds"))}</h2>
      ${roundsTable(game)}
      ${game.round !== null && !game.game_over && game.phase === "idle"
        ? `<p class="muted small">${esc(T("status.next", { engine: double(game.round) }))}</p>` : ""}
    </section>`;
}

start(render);
