// The model every page draws from, kept live over /events, and what all pages share:
// translations, the PIN, sending changes, and the banners for alerts, questions and the camera.

const boot = JSON.parse(document.getElementById("boot").textContent);
export const strings = boot.strings;
export const extra = boot;
export let model = boot.model;

const PIN_KEY = "domino-hub.pin";
const renderers = [];

// ------------------------------------------------------------------ text
export function T(key, params = {}) {
  const text = strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, k) => (params[k] ?? null) !== null ? String(params[k]) : m);
}

export function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
  })[c]);
}

export const tileText = (t) => `${t[0]}|${t[1]}`;
export const double = (v) => `${v}|${v}`;
export const trainName = (name) => name === "mexican" ? T("train.mexican") : T("train.of", { name });

export function alertText(a) {
  const p = a.params || {};
  const reason = T(`alert.${a.code}`, {
    player: a.player, tile: a.tile ? tileText(a.tile) : null, train: a.train ? trainName(a.train) : null,
    end: p.end, turn: p.turn, double: p.double, double_train: p.double_train ? trainName(p.double_train) : null,
  });
  const text = /\{\w+\}/.test(reason) ? a.message : reason; // a fact we lack: the engine's own words
  return a.player ? T("alert.line", { player: a.player, reason: text }) : text;
}

// ------------------------------------------------------------------ live model
export function onModel(render) {
  renderers.push(render);
}

function renderAll(event) {
  for (const render of renderers) render(model, event);
}

let liveState = "connecting";
function setLive(state) {
  liveState = state;
  const el = document.getElementById("live");
  el.dataset.state = state;
  el.textContent = T(`live.${state}`);
}

let source = null;
function connect() {
  setLive("connecting");
  source = new EventSource("/events");
  source.addEventListener("open", () => setLive("live"));
  source.addEventListener("state", (e) => {
    model = JSON.parse(e.data).model;
    renderAll({ type: "state" });
  });
  source.addEventListener("update", (e) => {
    const data = JSON.parse(e.data);
    Object.assign(model, data.model);
    renderAll(data.event);
  });
  source.addEventListener("error", () => {
    if (source.readyState === EventSource.CLOSED) { // refused (the hub is full or restarting): try again
      setLive("offline");
      setTimeout(connect, 3000);
    } else {
      setLive("reconnecting");
    }
  });
}

export function start(render) {
  onModel(renderBanners);
  if (render) onModel(render);
  renderAll({ type: "state" });
  connect();
}

// ------------------------------------------------------------------ changes (need the PIN)
function askPin(message) {
  const dialog = document.getElementById("pin-dialog");
  const input = dialog.querySelector("input");
  dialog.querySelector(".pin-message").textContent = message || "";
  input.value = "";
  return new Promise((resolve) => {
    dialog.onclose = () => resolve(dialog.returnValue === "ok" && input.value.trim() ? input.value.trim() : null);
    dialog.showModal();
    input.focus();
  });
}

export async function send(path, body = {}) {
  let message = "";
  for (let attempt = 0; attempt < 4; attempt++) {
    let pin = localStorage.getItem(PIN_KEY);
    if (!pin) {
      pin = await askPin(message);
      if (!pin) return { ok: false, cancelled: true, data: {} };
    }
    let response;
    try {
      response = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Table-Pin": pin },
        body: JSON.stringify(body),
      });
    } catch {
      toast(T("error.offline"), true);
      return { ok: false, status: 0, data: {} };
    }
    let data = {};
    try { data = await response.json(); } catch { /* an empty or non-JSON answer */ }
    if (response.status === 401 || (response.status === 403 && data.error === "wrong-pin")) {
      localStorage.removeItem(PIN_KEY);
      message = T(response.status === 401 ? "pin.needed" : "pin.wrong");
      continue;
    }
    if (response.ok) {
      localStorage.setItem(PIN_KEY, pin);
      if (data.model && liveState !== "live") { // the stream keeps order; the answer is only a fallback
        model = data.model;
        renderAll({ type: "state" });
      }
    } else {
      toast(errorText(data), true);
    }
    return { ok: response.ok, status: response.status, data };
  }
  return { ok: false, status: 403, data: {} };
}

export function errorText(data) {
  if (data.error === "illegal") {
    return data.alert ? alertText(data.alert) : T(`alert.${data.code}`, {}).replace(/\{\w+\}/g, "") || data.message;
  }
  if (data.error === "bad-input") return T("error.bad-input", { field: data.field, message: data.message });
  const key = `error.${data.error}`;
  return key in strings ? T(key) : (data.message || T("error.unknown"));
}

let toastTimer = null;
export function toast(text, bad = false) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.classList.toggle("bad", bad);
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, bad ? 6000 : 2500);
}

// ------------------------------------------------------------------ banners on every page
function renderBanners(m) {
  const parts = [];
  const cam = m.camera || { status: "unknown" };
  if (!["ok", "unknown"].includes(cam.status)) {
    parts.push(`<div class="banner camera" data-status="${esc(cam.status)}">${esc(T(`camera.${cam.status}`))}` +
      `${cam.detail ? ` <small>${esc(cam.detail)}</small>` : ""}</div>`);
  }
  for (const a of m.alerts || []) {
    parts.push(`<div class="banner alert" role="alert" data-alert="${a.id}">
      <span class="icon" aria-hidden="true">!</span>
      <div><strong>${esc(T("alert.title"))}</strong><p>${esc(alertText(a))}</p></div>
      <button type="button" class="ghost" data-dismiss="${a.id}">${esc(T("action.dismiss"))}</button></div>`);
  }
  for (const q of m.questions || []) {
    const choices = q.choices.map((c) => `<button type="button" data-question="${q.id}" data-answer="${esc(c)}">${esc(c)}</button>`);
    // a tile the camera did not offer (or never saw) can be typed in
    const typed = q.typed ? `<form class="typed" data-question="${q.id}"><label>${esc(T("question.other"))}
      <input name="tile" autocomplete="off" pattern="\\s*\\d{1,2}\\s*\\|\\s*\\d{1,2}\\s*" required size="6"></label>
      <button type="submit">${esc(T("question.send"))}</button></form>` : "";
    parts.push(`<div class="banner question" data-question-id="${q.id}">
      <div><strong>${esc(T("question.title"))}</strong><p>${esc(q.text)}</p></div>
      <div class="choices">${choices.join("")}</div>${typed}</div>`);
  }
  const banners = document.getElementById("banners");
  // the banners are drawn again on every update: a tile being typed in must survive that
  const typing = [...banners.querySelectorAll("form.typed")].map((f) => [f.dataset.question, f.elements.tile.value,
    document.activeElement === f.elements.tile]);
  banners.innerHTML = parts.join("");
  for (const [id, value, focused] of typing) {
    const input = banners.querySelector(`form.typed[data-question="${id}"] input`);
    if (!input) continue;
    input.value = value;
    if (focused) input.focus();
  }
}

document.addEventListener("click", async (e) => {
  const dismiss = e.target.closest("[data-dismiss]");
  if (dismiss) {
    await send(`/api/alerts/${dismiss.dataset.dismiss}/dismiss`);
    return;
  }
  const answer = e.target.closest("[data-answer]");
  if (answer) await answerQuestion(answer.dataset.question, answer.dataset.answer);
});

document.addEventListener("submit", async (e) => {
  const form = e.target.closest("form.typed[data-question]");
  if (!form) return;
  e.preventDefault();
  await answerQuestion(form.dataset.question, form.elements.tile.value.replace(/\s+/g, ""));
});

async function answerQuestion(id, answer) {
  const result = await send(`/api/questions/${id}/answer`, { answer });
  if (result.ok) toast(T("question.thanks"));
}

// ------------------------------------------------------------------ shared drawing
export function roundsTable(game) {
  if (!game || !game.rounds.length) return `<p class="muted">${esc(T("scores.no-rounds"))}</p>`;
  const leaders = new Set(game.leaders);
  const head = game.players.map((p) => `<th scope="col" class="${leaders.has(p) ? "lead" : ""}">${esc(p)}</th>`);
  const rows = game.rounds.map((r) => {
    const cells = game.players.map((p) => `<td class="${r.went_out === p ? "out" : ""}">${r.scores[p] ?? 0}</td>`);
    return `<tr><th scope="row">${double(r.engine)}</th>${cells.join("")}</tr>`;
  });
  const totals = game.players.map((p) => `<td class="${leaders.has(p) ? "lead" : ""}">${game.scores[p]}</td>`);
  return `<div class="table-scroll"><table class="rounds">
    <thead><tr><th scope="col">${esc(T("scores.engine"))}</th>${head.join("")}</tr></thead>
    <tbody>${rows.join("")}</tbody>
    <tfoot><tr><th scope="row">${esc(T("scores.total"))}</th>${totals.join("")}</tr></tfoot></table></div>`;
}

export function gameStatus(game) {
  if (!game) return T("status.no-game");
  if (game.game_over || game.ended) {
    const names = game.leaders.join(", ");
    return game.leaders.length > 1 ? T("status.winners", { names }) : T("status.winner", { name: names });
  }
  if (game.phase === "playing") {
    return T("status.turn", { engine: double(game.engine), name: game.turn });
  }
  if (game.phase === "ended") return T("status.count", { engine: double(game.engine) });
  return T("status.next", { engine: double(game.round) });
}
