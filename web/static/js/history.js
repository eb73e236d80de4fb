// Past games, newest first: who played, the totals and who won.
import { T, esc, extra, start } from "./core.js";

function when(seconds) {
  return new Date(seconds * 1000).toLocaleString(document.documentElement.lang, { dateStyle: "medium", timeStyle: "short" });
}

function render() {
  const el = document.getElementById("history");
  const games = extra.games || [];
  if (!games.length) {
    el.innerHTML = `<p class="muted">${esc(T("history.empty"))}</p>`;
    return;
  }
  el.innerHTML = `<ul class="games">${games.map((g) => {
    const winners = g.leaders.join(", ");
    const state = g.ended ? T("history.finished") : T("history.open");
    return `<li><a href="/history/${g.id}">
      <span class="when">${esc(when(g.created))} · ${esc(T(`preset.${g.preset}`))}</span>
      <span class="who">${esc(g.players.join(", "))}</span>
      <span class="result">${esc(T("history.rounds", { played: g.rounds_played, total: g.rounds_total }))} · ${esc(state)}${
        g.rounds_played ? ` · ${esc(g.leaders.length > 1 ? T("status.winners", { names: winners }) : T("status.winner", { name: winners }))}` : ""}</span>
    </a></li>`;
  }).join("")}</ul>`;
}

start(render);
