// Game set-up: players in seating order, a preset, and every house rule the engine knows.
import { T, esc, extra, model, onModel, send, start, toast } from "./core.js";

const presets = extra.presets;
const form = document.getElementById("setup-form");
const list = document.getElementById("players");
const SIMPLE = ["set", "min_players", "max_players", "first_player", "first_turn", "doubles", "close_doubles",
  "double_blank", "positive_scoring", "no_foreign_trains_first_turn"];

// ------------------------------------------------------------------ players and seats
function playerRow(name = "") {
  const li = document.createElement("li");
  li.innerHTML = `<span class="seat"></span>
    <input name="player" autocomplete="off" maxlength="24" aria-label="${esc(T("setup.player-name"))}" value="${esc(name)}">
    <button type="button" class="icon" data-move="-1" aria-label="${esc(T("setup.move-up"))}">↑</button>
    <button type="button" class="icon" data-move="1" aria-label="${esc(T("setup.move-down"))}">↓</button>
    <button type="button" class="icon" data-remove aria-label="${esc(T("setup.remove"))}">✕</button>`;
  return li;
}

function renumber() {
  [...list.children].forEach((li, i) => {
    li.querySelector(".seat").textContent = i + 1;
    li.querySelector("input").placeholder = T("setup.player-n", { n: i + 1 });
    li.querySelector("input").dataset.index = i;
  });
}

list.addEventListener("click", (e) => {
  const li = e.target.closest("li");
  if (!li) return;
  if (e.target.closest("[data-remove]")) {
    if (list.children.length > 1) li.remove();
  } else if (e.target.closest("[data-move]")) {
    const up = e.target.closest("[data-move]").dataset.move === "-1";
    if (up && li.previousElementSibling) list.insertBefore(li, li.previousElementSibling);
    if (!up && li.nextElementSibling) list.insertBefore(li.nextElementSibling, li);
  }
  renumber();
});

document.getElementById("add-player").addEventListener("click", () => {
  if (list.children.length >= 10) return;
  list.appendChild(playerRow());
  renumber();
  list.lastElementChild.querySelector("input").focus();
});

// ------------------------------------------------------------------ rules
const field = (name) => form.elements[`opt-${name}`];

function describeEngines(engines) {
  return engines.join(" ");
}

function describeHands(hands) {
  return Object.entries(hands).map(([n, size]) => `${n}:${size}`).join(" ");
}

function applyPreset(name) {
  const rules = presets[name];
  for (const key of SIMPLE) {
    const input = field(key);
    if (input.type === "checkbox") input.checked = rules[key];
    else input.value = String(rules[key]);
  }
  field("engines").value = "";
  field("hand_sizes").value = "";
  updatePlaceholders();
  document.getElementById("preset-help").textContent = T(`preset.${name}.help`);
}

function updatePlaceholders() {
  const rules = presets[form.elements.preset.value];
  const sameSet = Number(field("set").value) === rules.set;
  field("engines").placeholder = sameSet ? describeEngines(rules.engines) : T("setup.auto");
  field("hand_sizes").placeholder = sameSet ? describeHands(rules.hand_sizes) : T("setup.auto");
}

function parseEngines(text) {
  const parts = text.trim().split(/[\s,;]+/);
  return parts.every((p) => /^\d+$/.test(p)) ? parts.map(Number) : text;
}

function parseHands(text) {
  const out = {};
  for (const part of text.trim().split(/[\s,;]+/)) {
    const m = /^(\d+)\s*[:=]\s*(\d+)$/.exec(part);
    if (!m) return text;
    out[m[1]] = Number(m[2]);
  }
  return out;
}

function collect() {
  const preset = form.elements.preset.value;
  const base = presets[preset];
  const rules = { preset };
  for (const key of SIMPLE) {
    const input = field(key);
    let value;
    if (input.type === "checkbox") value = input.checked;
    else if (input.type === "number" || key === "set") value = input.value === "" ? input.value : Number(input.value);
    else value = input.value;
    if (value !== base[key]) rules[key] = value;
  }
  if (field("engines").value.trim()) rules.engines = parseEngines(field("engines").value);
  if (field("hand_sizes").value.trim()) rules.hand_sizes = parseHands(field("hand_sizes").value);
  const players = [...list.querySelectorAll("input")].map((i) => i.value.trim()).filter((v) => v);
  return { players, rules };
}

function showFieldError(data) {
  for (const el of form.querySelectorAll(".invalid")) el.classList.remove("invalid");
  const box = document.getElementById("setup-error");
  box.textContent = "";
  if (data.error !== "bad-input") return;
  let target = null;
  const seat = /^players\[(\d+)\]$/.exec(data.field || "");
  if (seat) target = list.querySelectorAll("input")[Number(seat[1])];
  else if ((data.field || "").startsWith("rules.")) target = field(data.field.slice(6)) || form.elements.preset;
  else if (data.field === "players") target = list;
  if (target) {
    target.classList.add("invalid");
    if (target.focus) target.focus();
    const details = target.closest("details");
    if (details) details.open = true;
  }
  box.textContent = T("error.bad-input", { field: data.field, message: data.message });
}

form.addEventListener("change", (e) => {
  if (e.target.name === "preset") applyPreset(e.target.value);
  if (e.target.name === "opt-set") updatePlaceholders();
});

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const result = await send("/api/game", collect());
  if (result.ok) {
    toast(T("setup.started"));
    setTimeout(() => { window.location.href = "/"; }, 600);
  } else {
    showFieldError(result.data || {});
  }
});

// ------------------------------------------------------------------ the game now open
function renderCurrent(m) {
  const box = document.getElementById("current");
  const game = m.game;
  if (!game || game.ended) {
    box.innerHTML = `<p class="muted">${esc(T("setup.no-open-game"))}</p>`;
    form.querySelector("button[type=submit]").textContent = T("setup.start");
    return;
  }
  box.innerHTML = `<p>${esc(T("setup.open-game", { players: game.players.join(", "), preset: T(`preset.${game.preset}`) }))}</p>
    <p class="buttons"><button type="button" class="ghost danger" id="end-game">${esc(T("setup.end-game"))}</button></p>`;
  form.querySelector("button[type=submit]").textContent = T("setup.replace");
}

document.getElementById("current").addEventListener("click", async (e) => {
  if (e.target.id === "end-game") {
    const result = await send("/api/game/end");
    if (result.ok) toast(T("round.finished"));
  }
});

const seated = model.game ? model.game.players : ["", ""];
for (const name of seated) list.appendChild(playerRow(name));
renumber();
const chosen = model.game && presets[model.game.preset] ? model.game.preset : "classic";
form.elements.preset.value = chosen;
applyPreset(chosen);
onModel(renderCurrent);
start();
