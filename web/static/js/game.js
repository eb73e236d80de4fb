// One past game: its round table and its winner.
import { T, esc, extra, roundsTable, start } from "./core.js";

function render() {
  const g = extra.past;
  const names = g.leaders.join(", ");
  const result = g.rounds.length
    ? (g.leaders.length > 1 ? T("status.winners", { names }) : T("status.winner", { name: names }))
    : T("scores.no-rounds");
  document.getElementById("game").innerHTML = `
    <section class="card status"><p class="big">${esc(result)}</p>
      <p class="muted">${esc(new Date(g.created * 1000).toLocaleString(document.documentElement.lang))} · ${esc(T(`preset.${g.preset}`))} · ${esc(T("history.rounds", { played: g.rounds.length, total: g.rounds_total }))}</p></section>
    <section class="card"><h2>${esc(T("scores.rounds"))}</h2>${roundsTable(g)}</section>`;
}

start(render);
