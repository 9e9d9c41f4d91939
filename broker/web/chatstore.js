// cordon dashboard: the active chat of each agent room (DA-2), with its
// tool calls and notices.  Kept in localStorage under cordon.chat.<agent>
// (or in memory only, by setting), with a per-room generation counter: a
// run remembers the generation it started in and may write only while it
// is still current, so a stopped, superseded or unmounted run never
// writes into a cleared or re-opened room.

const PREFIX = 'cordon.chat.';
const SETTINGS = 'cordon.settings';
const MAX_MESSAGES = 200;
const MAX_CHARS = 512 * 1024; // per stored chat; older messages go first

const memory = new Map(); // agent -> chat, when kept in memory only
const gens = new Map(); // agent -> generation

function storage() {
  try {
    return window.localStorage;
  } catch {
    return null; // storage disabled: memory only
  }
}

export function settings() {
  const s = storage();
  let v = null;
  try {
    v = s ? JSON.parse(s.getItem(SETTINGS) || 'null') : null;
  } catch {
    v = null;
  }
  return { memoryOnly: !s || (v !== null && v.memoryOnly === true) };
}

export function setMemoryOnly(on) {
  const s = storage();
  if (!s) return;
  if (on) {
    // Move every stored chat into memory and off the disk.
    for (const k of chatKeys(s)) {
      const chat = parse(s.getItem(k));
      if (chat) memory.set(k.slice(PREFIX.length), chat);
      s.removeItem(k);
    }
  } else {
    for (const [agent, chat] of memory) write(s, agent, chat);
    memory.clear();
  }
  s.setItem(SETTINGS, JSON.stringify({ memoryOnly: !!on }));
}

function chatKeys(s) {
  const out = [];
  for (let i = 0; i < s.length; i++) {
    const k = s.key(i);
    if (k && k.startsWith(PREFIX)) out.push(k);
  }
  return out;
}

function emptyChat() {
  return { v: 1, session: newSession(), messages: [] };
}

export function newSession() {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return 's-' + [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

const ROLES = new Set(['user', 'agent']);
const MAX_STEPS = 500; // tool calls and notices kept per message
const str = (v, max) => (typeof v === 'string' ? v.slice(0, max) : '');

// A message's steps (API-3 tool calls and notices, each at an offset of
// its text), re-made field by field with the bounds the spawner keeps.
function parseSteps(steps, textLen) {
  const out = [];
  let at = 0;
  for (const s of Array.isArray(steps) ? steps.slice(0, MAX_STEPS) : []) {
    if (!s || !Number.isInteger(s.at) || s.at < at || s.at > textLen) continue;
    at = s.at;
    if (s.kind === 'notice' && typeof s.text === 'string') {
      out.push({ at, kind: 'notice', text: str(s.text, 200) });
    } else if (s.kind === 'tool' && typeof s.tool === 'string') {
      const c = { at, kind: 'tool', id: str(s.id, 200), tool: str(s.tool, 200), input: str(s.input, 1000) };
      if (typeof s.ok === 'boolean') {
        c.ok = s.ok;
        c.summary = str(s.summary, 1000);
      }
      out.push(c);
    }
  }
  return out;
}

// Stored data is input too: keep only the fields and types we write.
function parse(raw) {
  let o;
  try {
    o = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!o || o.v !== 1 || typeof o.session !== 'string' ||
      !/^[A-Za-z0-9_-]{1,96}$/.test(o.session) || !Array.isArray(o.messages))
    return null;
  const messages = [];
  for (const m of o.messages) {
    if (!m || !ROLES.has(m.role) || typeof m.text !== 'string') continue;
    const c = { role: m.role, text: m.text };
    if (typeof m.state === 'string') c.state = m.state;
    if (m.usage && typeof m.usage === 'object') c.usage = m.usage;
    if (m.saved && typeof m.saved.path === 'string') c.saved = { path: m.saved.path };
    if (m.error && typeof m.error.errorClass === 'string') {
      c.error = { errorClass: m.error.errorClass, errorMessage: String(m.error.errorMessage || '') };
      if (typeof m.error.reason === 'string') c.error.reason = m.error.reason;
      if (typeof m.error.stderrTail === 'string') c.error.stderrTail = m.error.stderrTail;
    }
    const steps = parseSteps(m.steps, m.text.length);
    if (steps.length) c.steps = steps;
    if (m.truncated === true) c.truncated = true;
    if (Number.isFinite(m.durationMs)) c.durationMs = m.durationMs;
    if (Number.isInteger(m.exitCode)) c.exitCode = m.exitCode;
    messages.push(c);
  }
  return { v: 1, session: o.session, messages };
}

function write(s, agent, chat) {
  let c = chat;
  while (c.messages.length > MAX_MESSAGES ||
      (c.messages.length > 1 && JSON.stringify(c).length > MAX_CHARS))
    c = { ...c, messages: c.messages.slice(1) };
  try {
    s.setItem(PREFIX + agent, JSON.stringify(c));
  } catch {
    memory.set(agent, chat); // quota: keep it for this page at least
  }
}

export function generation(agent) {
  return gens.get(agent) || 0;
}

// A new generation: every run started before can no longer write here.
export function bump(agent) {
  const g = generation(agent) + 1;
  gens.set(agent, g);
  return g;
}

export function load(agent) {
  if (memory.has(agent)) return memory.get(agent);
  const s = storage();
  if (!s || settings().memoryOnly) return emptyChat();
  return parse(s.getItem(PREFIX + agent)) || emptyChat();
}

// Save only if gen is still the room's generation; false otherwise.
export function save(agent, gen, chat) {
  if (gen !== generation(agent)) return false;
  const s = storage();
  if (!s || settings().memoryOnly) memory.set(agent, chat);
  else write(s, agent, chat);
  return true;
}

// New session: an empty chat and a new generation.
export function clear(agent) {
  bump(agent);
  memory.delete(agent);
  const s = storage();
  if (s) s.removeItem(PREFIX + agent);
}

// Whether this browser holds any chat (stored or in memory).
export function any() {
  const s = storage();
  return memory.size > 0 || (s ? chatKeys(s).length > 0 : false);
}

// "Clear all chat cache": every room, stored or in memory.
export function clearAll() {
  const s = storage();
  const agents = new Set([...memory.keys(), ...gens.keys()]);
  if (s) {
    for (const k of chatKeys(s)) {
      agents.add(k.slice(PREFIX.length));
      s.removeItem(k);
    }
  }
  memory.clear();
  for (const a of agents) bump(a);
  return agents.size;
}
