// cordon dashboard: an agent room (DA-1, DA-2, API-3, API-4): a run's
// tokens, tool calls, notices and connections (EG-4) as they come; Stop,
// New session, usage, the saved note; Ctrl/⌘+Enter sends, Esc stops.
// The chat lives in chatstore.js; a run writes only in its generation.

import {
  streamNDJSON, cancelRun, runAdd, runSetId, runDone, seg,
} from './api.js';
import * as store from './chatstore.js';
import {
  el, h, button, pill, fmtMs, fmtBytes, fmtElapsed, ticker,
} from './dom.js';

const MAX_PROMPT = 256000;
const SAVE_EVERY_MS = 400;
const STOP_GRACE_MS = 6000; // SP-8: SIGKILL 2-3 s after SIGTERM, plus slack

// Stock texts for refusals before the stream (codes from the fixed set).
const REFUSED = {
  'invalid-prompt': 'The prompt was refused (empty, too long, or containing NUL).',
  'invalid-body': 'The request was refused as malformed.',
  'unknown-agent': 'cordon knows no such agent.',
  busy: 'Too many runs at once. Try again shortly.',
  'missing-secret': 'A secret this agent needs is missing.',
};

export function notePath(p) {
  return `#vault/${String(p).split('/').map(encodeURIComponent).join('/')}`;
}

function usageStrip(u) {
  const s = el('div', 'usage');
  for (const [k, v] of Object.entries(u)) {
    if (k === 'kind' || (typeof v !== 'number' && typeof v !== 'string')) continue;
    s.append(h('span', 'usage-item', el('span', 'usage-k', k), el('span', 'usage-v', String(v))));
  }
  return s.childElementCount ? s : null;
}

// A run's error event: its class and stock message, and (SP-12) the
// reason and stderr tail cordon built, cleaned and scrubbed.
function errorOf(ev) {
  const e = { errorClass: String(ev.errorClass || 'unknown'), errorMessage: String(ev.errorMessage || '') };
  if (typeof ev.reason === 'string') e.reason = ev.reason;
  if (typeof ev.stderrTail === 'string') e.stderrTail = ev.stderrTail;
  return e;
}

function metaLine(m) {
  const line = el('div', 'msg-meta');
  if (m.state === 'running') line.append(pill('streaming…', 'muted'));
  if (m.state === 'stopped') line.append(pill('stopped', 'warn'));
  if (m.state === 'interrupted') line.append(pill('interrupted', 'warn'));
  if (Number.isInteger(m.exitCode)) line.append(el('span', 'meta', `exit ${m.exitCode}`));
  if (Number.isFinite(m.durationMs)) line.append(el('span', 'meta', fmtMs(m.durationMs)));
  if (m.truncated) line.append(pill('truncated', 'warn'));
  if (m.error) {
    const e = pill(m.error.errorClass, 'bad');
    e.classList.add('error-pill');
    line.append(e, el('span', 'error-msg', m.error.errorMessage));
    // SP-12: what failed and where, and the last stderr lines, as text.
    if (m.error.reason) line.append(el('span', 'error-reason', m.error.reason));
  }
  if (m.saved) {
    const a = el('a', 'saved-link', m.saved.path);
    a.href = notePath(m.saved.path);
    a.dataset.note = m.saved.path;
    line.append(h('span', 'meta', 'saved to ', a,
      Number.isFinite(m.saved.bytes) ? ` (${fmtBytes(m.saved.bytes)})` : ''));
  }
  return line;
}

// A tool call as a terminal agent shows it: name and input, then its
// outcome in words (not only colour) and its result, folded.
function toolNode(s) {
  const state = s.ok === true ? 'ok' : s.ok === false ? 'failed' : 'running';
  const label = { ok: '✓ ok', failed: '✗ failed', running: '… running' }[state];
  const box = h('div', 'tool',
    h('div', 'tool-call', el('span', 'tool-name', s.tool), el('code', 'tool-input', s.input)));
  box.dataset.state = state;
  if (typeof s.summary === 'string' && s.summary !== '') {
    const d = h('details', 'tool-result', el('summary', 'tool-status', label),
      el('pre', 'tool-summary', s.summary));
    box.append(d);
  } else {
    box.append(el('div', 'tool-status', label));
  }
  return box;
}

// EG-4: the run's proxy connections, live, a row each, updated as it
// ends: only egressd's facts; a host the allowlist does not name itself
// is never named.
function connsNode(conns) {
  const table = el('table', 'egress-conns');
  const cap = el('caption', null, `Network connections (${conns.length})`);
  const head = h('tr', null);
  for (const c of ['Host', 'Decision', 'Up', 'Down', 'Time'])
    head.append(Object.assign(el('th', null, c), { scope: 'col' }));
  const rows = conns.map((c) => {
    const tr = el('tr', `conn conn-${c.state}`);
    tr.dataset.conn = String(c.conn);
    tr.dataset.state = c.state;
    tr.append(el('td', 'conn-host mono',
      c.host ? `${c.host}:${c.port}` :
        c.decision === 'allow' ? `(a name under ${c.rule || 'a wildcard'})` : '(unlisted host)'));
    const what = c.decision === 'allow' ? (c.state === 'open' ? 'open' : `allowed, ${c.end || 'closed'}`) :
      `denied: ${c.reason || 'refused'}`;
    const d = el('td', 'conn-decision', what);
    d.classList.add(c.decision === 'allow' ? 'ok' : 'bad');
    d.dataset.value = c.decision;
    tr.append(d,
      el('td', 'conn-up num', c.state === 'open' ? '…' : fmtBytes(c.bytesUp)),
      el('td', 'conn-down num', c.state === 'open' ? '…' : fmtBytes(c.bytesDown)),
      el('td', 'conn-ms num', c.state === 'open' ? '…' : fmtMs(c.durationMs)));
    return tr;
  });
  table.append(cap, h('thead', null, head), h('tbody', null, ...rows));
  return h('div', 'egress-wrap', table);
}

// One egress event into the message's connections, by number.
function connOf(ev) {
  const n = (v) => (Number.isFinite(v) && v >= 0 ? v : 0);
  if (!Number.isInteger(ev.conn) || (ev.state !== 'open' && ev.state !== 'end')) return null;
  const c = { conn: ev.conn, state: ev.state, decision: ev.decision === 'allow' ? 'allow' : 'deny',
    bytesUp: n(ev.bytesUp), bytesDown: n(ev.bytesDown), durationMs: n(ev.durationMs) };
  if (typeof ev.host === 'string' && Number.isInteger(ev.port)) {
    c.host = ev.host;
    c.port = ev.port;
  }
  if (typeof ev.reason === 'string') c.reason = ev.reason;
  if (typeof ev.end === 'string') c.end = ev.end;
  return c;
}

const CONNS_MAX = 200; // shown per message; the audit trail has them all

function stepNode(s) {
  if (s.kind === 'tool') return toolNode(s);
  return h('div', 'notice', el('span', 'notice-mark', 'notice: '), s.text);
}

// A run's event (API-3) folded into its message m; false if it has no
// place there.  The token and start events of a live chat are the Room's.
export function foldEvent(m, ev) {
  switch (ev.kind) {
  case 'token':
    if (typeof ev.text !== 'string') return false;
    m.text += ev.text;
    return true;
  case 'usage':
    m.usage = { ...ev };
    delete m.usage.kind;
    break;
  case 'error':
    m.error = errorOf(ev);
    break;
  case 'tool':
    if (typeof ev.tool !== 'string') return false;
    (m.steps ||= []).push({ at: m.text.length, kind: 'tool', id: String(ev.id || ''),
      tool: ev.tool, input: String(ev.input || '') });
    break;
  case 'tool_result': {
    // Its call, by id; else the latest call still waiting.
    const calls = (m.steps || []).filter((s) => s.kind === 'tool' && s.ok === undefined);
    const c = calls.reverse().find((s) => !ev.id || s.id === ev.id);
    if (!c) return false;
    c.ok = ev.ok === true;
    c.summary = String(ev.summary || '');
    break;
  }
  case 'egress': {
    const c = connOf(ev);
    if (!c) return false;
    const list = (m.conns ||= []);
    const i = list.findIndex((x) => x.conn === c.conn);
    if (i >= 0) list[i] = c;
    else if (list.length < CONNS_MAX) list.push(c);
    else return false;
    break;
  }
  case 'notice':
    if (typeof ev.text !== 'string') return false;
    (m.steps ||= []).push({ at: m.text.length, kind: 'notice', text: ev.text });
    break;
  case 'done':
    if (Number.isInteger(ev.exitCode)) m.exitCode = ev.exitCode;
    if (Number.isFinite(ev.durationMs)) m.durationMs = ev.durationMs;
    if (ev.truncated === true) m.truncated = true;
    m.state = ev.cancelled === true ? 'stopped' : 'done';
    break;
  case 'saved':
    if (typeof ev.path === 'string')
      m.saved = { path: ev.path, bytes: Number.isFinite(ev.bytes) ? ev.bytes : undefined };
    break;
  default:
    return false;
  }
  return true;
}

// One message of a chat (or a job's run, jobs.js): its text and steps in
// the order they came, its meta line, stderr tail and usage.
export function messageNode(m) {
  const box = el('div', `msg msg-${m.role}`);
  box.dataset.state = m.state || 'done';
  const body = el('div', 'msg-text');
  const steps = m.steps || [];
  if (m.text === '' && !steps.length && m.role === 'agent' && m.state !== 'running')
    body.classList.add('is-empty');
  // Text and steps in the order they came: each step sits at its offset.
  let at = 0;
  for (const s of steps) {
    const to = Math.min(Math.max(s.at, at), m.text.length);
    if (to > at) body.append(document.createTextNode(m.text.slice(at, to)));
    body.append(stepNode(s));
    at = to;
  }
  const t = document.createTextNode(m.text.slice(at));
  body.append(t);
  box.append(body);
  if (m.role === 'agent') {
    box.append(metaLine(m));
    if (m.error && m.error.stderrTail) {
      const tail = el('pre', 'error-tail', m.error.stderrTail);
      tail.title = 'The last lines the agent wrote on stderr, cleaned and scrubbed';
      box.append(tail);
    }
    if (m.usage) {
      const u = usageStrip(m.usage);
      if (u) box.append(u);
    }
    if (Array.isArray(m.conns) && m.conns.length) box.append(connsNode(m.conns));
  }
  return { box, textNode: t };
}

export class Room {
  constructor(agent) {
    this.agent = agent;
    this.run = null; // {gen, msg, ctrl, key, runId, stopping, textNode}
    this.chat = store.load(agent);
    // A run that was streaming when the page went away did not finish.
    for (const m of this.chat.messages)
      if (m.state === 'running') m.state = 'interrupted';
    this.gen = store.bump(agent); // this room's generation
    this.savedAt = 0;
    this.build();
    this.render();
  }

  build() {
    this.log = el('div', 'chat-log');
    this.log.setAttribute('role', 'log');
    this.log.setAttribute('aria-live', 'polite');
    this.input = el('textarea', 'prompt');
    this.input.id = 'prompt';
    this.input.rows = 3;
    this.input.placeholder = 'Ask the agent…';
    this.input.setAttribute('aria-label', 'Prompt');
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.send();
      }
    });
    this.note = el('p', 'room-note');
    this.note.hidden = true;
    this.sendBtn = button('Send', 'primary send', () => this.send());
    this.stopBtn = button('Stop', 'danger stop', () => this.stop());
    this.newBtn = button('New session', 'new-session', () => this.newSession());
    this.onKey = (e) => {
      if (e.key === 'Escape' && this.run) {
        e.preventDefault();
        this.stop();
      }
    };
    document.addEventListener('keydown', this.onKey);
    this.root = h('section', 'room',
      h('div', 'room-head', el('h3', null, 'Chat'), this.newBtn),
      this.log,
      this.note,
      h('div', 'composer', this.input,
        h('div', 'composer-bar',
          el('span', 'hint', 'Ctrl/⌘+Enter to send · Esc to stop'),
          this.stopBtn, this.sendBtn)));
    this.root.dataset.agent = this.agent;
    this.sync();
  }

  sync() {
    const busy = this.run !== null;
    this.sendBtn.disabled = busy;
    this.stopBtn.disabled = !busy || this.run.stopping;
    this.root.dataset.running = busy ? 'yes' : 'no';
  }

  say(text) {
    this.note.textContent = text || '';
    this.note.hidden = !text;
  }

  msgNode(m) {
    return messageNode(m);
  }

  render() {
    const nodes = this.chat.messages.map((m) => this.msgNode(m));
    this.log.replaceChildren(...nodes.map((n) => n.box));
    if (!nodes.length)
      this.log.append(el('p', 'chat-empty', 'No messages yet in this session.'));
    if (this.run) {
      const i = this.chat.messages.indexOf(this.run.msg);
      if (i >= 0) {
        this.run.box = nodes[i].box;
        this.run.textNode = nodes[i].textNode;
      }
    }
    this.log.scrollTop = this.log.scrollHeight;
  }

  // Re-draw the live message's meta without touching its text.
  redrawRun() {
    const r = this.run;
    if (!r || !r.box || !r.box.isConnected) return this.render();
    const fresh = this.msgNode(r.msg);
    r.box.replaceWith(fresh.box);
    r.box = fresh.box;
    r.textNode = fresh.textNode;
    this.showElapsed(r);
  }

  persist(force) {
    const r = this.run;
    const now = Date.now();
    if (!force && now - this.savedAt < SAVE_EVERY_MS) return;
    this.savedAt = now;
    store.save(this.agent, r ? r.gen : this.gen, this.chat);
  }

  async send() {
    if (this.run) return;
    const prompt = this.input.value;
    if (prompt.trim() === '') {
      this.say('Write a prompt first.');
      return;
    }
    if (prompt.length > MAX_PROMPT || prompt.includes('\0')) {
      this.say(`A prompt is 1 to ${MAX_PROMPT} characters, without NUL.`);
      return;
    }
    this.say('');
    const msg = { role: 'agent', text: '', state: 'running' };
    this.chat.messages.push({ role: 'user', text: prompt }, msg);
    const ctrl = new AbortController();
    const run = { gen: this.gen, msg, ctrl, runId: null, stopping: false, key: 0 };
    run.key = runAdd(this.agent, () => this.stopRun(run));
    this.run = run;
    this.input.value = '';
    this.persist(true);
    this.render();
    this.sync();
    run.secs = 0;
    const stopTick = ticker((s) => { run.secs = s; this.showElapsed(run); });

    const res = await streamNDJSON(`/api/agents/${seg(this.agent)}/run`,
      { prompt, session: this.chat.session }, ctrl.signal, (ev) => this.event(run, ev));
    stopTick();
    clearTimeout(run.grace);
    runDone(run.key);
    if (run.gen !== store.generation(this.agent)) return; // cleared or left
    this.finish(run, res);
  }

  event(run, ev) {
    if (run.gen !== store.generation(this.agent)) return;
    const m = run.msg;
    switch (ev.kind) {
    case 'start':
      if (typeof ev.runId === 'string') {
        run.runId = ev.runId;
        runSetId(run.key, ev.runId);
        if (run.stopping) this.stopRun(run);
      }
      return;
    case 'token':
      if (typeof ev.text !== 'string') return;
      m.text += ev.text;
      if (run.textNode) run.textNode.appendData(ev.text);
      this.log.scrollTop = this.log.scrollHeight;
      this.persist(false);
      return;
    default:
      if (!foldEvent(m, ev)) return;
      if (ev.kind === 'done' && run.stopping) m.state = 'stopped';
    }
    this.persist(true);
    this.redrawRun();
  }

  finish(run, res) {
    const m = run.msg;
    if (res.kind === 'unavailable') {
      m.state = 'done';
      m.error = { errorClass: 'not-available', errorMessage: 'Running agents is not available in this build yet.' };
    } else if (res.kind === 'refused') {
      m.state = 'done';
      m.error = { errorClass: res.code || 'refused', errorMessage: REFUSED[res.code] || 'cordon refused the run.' };
      if (res.data && typeof res.data.reason === 'string') m.error.reason = res.data.reason;
    } else if (res.kind === 'signed-out') {
      m.state = 'done';
      m.error = { errorClass: 'signed-out', errorMessage: 'Not signed in — run cordon login on this machine and open the URL it prints.' };
    } else if (res.kind === 'aborted') {
      m.state = 'stopped';
    } else if (res.kind === 'error') {
      m.state = 'interrupted';
      m.error = { errorClass: 'connection', errorMessage: 'The connection to cordon was lost.' };
    } else if (m.state === 'running') {
      m.state = run.stopping ? 'stopped' : 'interrupted';
    }
    this.run = null;
    this.persist(true);
    this.render();
    this.sync();
  }

  // The running answer's pill: elapsed time, and "stopping…" after Stop.
  showElapsed(run) {
    if (run.gen !== store.generation(this.agent) || run.msg.state !== 'running') return;
    const p = this.log.querySelector('.msg-agent[data-state="running"] .msg-meta .pill');
    if (!p) return;
    p.classList.add('elapsed');
    p.textContent = `${run.stopping ? 'stopping…' : 'streaming…'} ${fmtElapsed(run.secs || 0)}`;
  }

  // API-4 when the run id is known; the stream then ends with "done".
  // Without an id (or if cancelling fails) closing the stream cancels it.
  async stopRun(run) {
    if (run.stopping && !run.runId) return;
    run.stopping = true;
    this.sync();
    this.showElapsed(run);
    clearTimeout(run.grace);
    run.grace = setTimeout(() => run.ctrl.abort(), STOP_GRACE_MS);
    if (!run.runId) return; // 'start' not seen yet: stop when it comes
    const ok = await cancelRun(run.runId);
    if (!ok) run.ctrl.abort();
  }

  stop() {
    if (this.run) return this.stopRun(this.run);
  }

  newSession() {
    const run = this.run;
    if (run) {
      this.stopRun(run);
      this.run = null;
    }
    store.clear(this.agent);
    this.gen = store.generation(this.agent);
    this.chat = store.load(this.agent);
    this.say('');
    this.render();
    this.sync();
    this.input.focus();
  }

  // Leaving the room: the run is stopped and can no longer write here.
  unmount() {
    document.removeEventListener('keydown', this.onKey);
    const run = this.run;
    if (run) {
      run.msg.state = 'stopped';
      this.persist(true);
      this.stopRun(run);
      this.run = null;
    }
    store.bump(this.agent);
  }
}
