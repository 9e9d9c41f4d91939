// cordon dashboard: the Missions view (DA-1, API-7, MI-1 ... MI-4).  A
// card per mission: trigger, outputs, permissions, the last run's result,
// and an options form from its schema, checked before it sends; the
// server decides and its answer is shown as it comes.  A running mission
// counts its elapsed time and cannot be stopped here (the page says so).
// Everything from the API is shown as text.

import { getJSON, pollDelay, postJSON, seg } from './api.js';
import {
  el, h, button, pill, fmt, fmtMs, fmtElapsed, ticker, viewHead, panelFor, loadingPanel,
  errorPanel,
} from './dom.js';

const POLL_MS = 10000;
const RUNNING_POLL_MS = 2000;
// The spawner ends a run at the mission's timeoutMs (at most an hour);
// the page waits as long as the broker does, plus a margin.
const RUN_MS = (3600 + 60 + 30) * 1000;
const ID_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;
const OPT_RE = /^[a-z][a-zA-Z0-9_]{0,31}$/;
const TYPES = new Set(['string', 'integer', 'boolean', 'enum']);

const STATUS_PILL = { success: 'ok', error: 'bad', denied: 'bad', skipped: 'warn' };

// errorClass (closed set) -> the stock sentence shown beside it.
const ERROR_TEXT = {
  'permission-denied': 'An output needs a permission the mission does not declare; nothing ran.',
  'options-invalid': 'The options do not fit the mission\'s schema; nothing ran.',
  timeout: 'The agent ran past the mission\'s timeout and was stopped.',
  'spawn-failed': 'The agent could not be started.',
  'non-zero-exit': 'The agent ended with an error.',
  killed: 'The agent was stopped.',
  'output-failed': 'An output could not be written; the outputs after it were not attempted.',
  'agent-unavailable': 'The mission\'s agent is not available.',
  'audit-unavailable': 'The audit trail could not record it; nothing ran.',
  'skipped-missed': 'A scheduled run was missed while cordon was down.',
  busy: 'The mission was still running when its next scheduled run came.',
};

// Refusals of POST /api/missions/{id}/run (fixed codes) -> stock sentences.
const REFUSED = {
  'mission-not-found': 'cordon knows no such mission.',
  'mission-options-invalid': 'cordon refused these options: they do not fit the mission\'s schema.',
  'mission-busy': 'This mission is already running.',
  'agent-unavailable': 'The mission\'s agent is not available.',
  'mission-id-malformed': 'cordon refused the mission id.',
  'invalid-body': 'cordon refused the request.',
};

const OUT_NAMES = { 'vault-note': 'vault note', event: 'event' };

// API-4 cancels chats and actions; no route stops a mission run.
const NO_STOP = 'A mission run cannot be stopped from the dashboard (Stop all does not ' +
  'reach it): it ends by itself or at the mission\'s timeout. Leaving this page does not stop it.';

function str(v) {
  return typeof v === 'string' ? v : null;
}

function int(v) {
  return Number.isSafeInteger(v) ? v : null;
}

function validOption(o) {
  if (!o || typeof o !== 'object' || typeof o.name !== 'string' || !OPT_RE.test(o.name) ||
    !TYPES.has(o.type))
    return false;
  if (o.type === 'enum')
    return Array.isArray(o.values) && o.values.length > 0 &&
      o.values.every((v) => typeof v === 'string');
  return true;
}

function validMission(m) {
  return m && typeof m === 'object' && typeof m.id === 'string' && ID_RE.test(m.id) &&
    Array.isArray(m.options) && m.options.every(validOption);
}

// What the card's form is built from: a changed schema rebuilds the card.
function schemaKey(m) {
  return JSON.stringify([m.label, m.agent, m.manual, m.cron, m.timezone, m.options,
    m.outputs, m.permissions]);
}

// "Manual", "Cron 0 18 * * 0 (Europe/Berlin)", or both.
function triggerText(m) {
  const parts = [];
  if (m.manual === true) parts.push('Manual');
  if (str(m.cron)) parts.push(`Cron ${m.cron} (${str(m.timezone) || 'UTC'})`);
  return parts.length ? parts.join(' · ') : '—';
}

function outputsText(list) {
  if (!Array.isArray(list) || !list.length) return 'none';
  return list.map((o) => (o && OUT_NAMES[o.type]) || 'other').join(', ');
}

function statusPill(status) {
  const s = str(status) || 'unknown';
  const p = pill(s, STATUS_PILL[s] || 'muted');
  p.classList.add('status-pill');
  p.dataset.status = s;
  return p;
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

// The neutral facts of a finished run (the run answer or lastRun): status,
// duration, outputs, error class with its stock sentence.  Never more.
function resultFacts(r, cls) {
  const box = el('div', cls);
  const status = str(r.status) || 'unknown';
  box.dataset.status = status;
  const head = h('div', 'viewer-head', statusPill(status));
  const dur = int(r.durationMs);
  if (dur !== null) head.append(el('span', 'meta duration', fmtMs(dur)));
  const persisted = int(r.outputsPersisted);
  const emitted = int(r.outputsEmitted);
  if (persisted !== null)
    head.append(el('span', 'meta persisted', plural(persisted, 'note written', 'notes written')));
  if (emitted !== null)
    head.append(el('span', 'meta emitted', plural(emitted, 'event emitted', 'events emitted')));
  if (str(r.runId)) head.append(el('span', 'meta mono run-id', `run ${r.runId}`));
  box.append(head);
  const ec = str(r.errorClass);
  if (ec) {
    const p = pill(ec, 'bad');
    p.classList.add('error-pill');
    box.dataset.errorClass = ec;
    box.append(h('p', 'error-msg', p, ' ', ERROR_TEXT[ec] || 'The run did not succeed.'));
  }
  return box;
}

function lastRunBlock(m) {
  const lr = m.lastRun && typeof m.lastRun === 'object' ? m.lastRun : null;
  if (!lr) {
    const p = el('p', 'last-run muted', 'Not run yet.');
    p.dataset.status = 'none';
    return p;
  }
  const box = resultFacts(lr, 'last-run');
  const when = int(lr.finishedAt);
  const trig = str(lr.trigger);
  const meta = [];
  if (trig) meta.push(trig === 'cron' ? 'scheduled' : trig);
  if (when !== null) meta.push(new Date(when).toLocaleString());
  box.prepend(el('div', 'out-label', `Last run${meta.length ? ` · ${meta.join(' · ')}` : ''}`));
  if (trig) box.dataset.trigger = trig;
  return box;
}

// ---- the options form ----

// One field per declared option, its constraints as attributes, defaults
// filled.  Returns {row, read()}: read() gives {ok, value?, skip?, why?}.
function field(m, o) {
  const id = `mo-${m.id}-${o.name}`;
  const required = !Object.hasOwn(o, 'default');
  const lab = el('label', 'opt-label', o.name);
  lab.htmlFor = id;
  const hint = el('span', 'opt-hint meta');
  const err = el('span', 'field-error');
  err.setAttribute('role', 'alert');
  let input;
  let read;
  if (o.type === 'boolean') {
    input = el('input');
    input.type = 'checkbox';
    input.checked = o.default === true;
    hint.textContent = 'yes / no';
    read = () => ({ ok: true, value: input.checked });
  } else if (o.type === 'enum') {
    input = el('select');
    if (required) input.append(new Option('— choose —', ''));
    for (const v of o.values) input.append(new Option(v, v));
    if (typeof o.default === 'string' && o.values.includes(o.default)) input.value = o.default;
    hint.textContent = 'one of the listed values';
    read = () => {
      if (input.value === '')
        return required ? { ok: false, why: 'Choose a value.' } : { ok: true, skip: true };
      if (!o.values.includes(input.value)) return { ok: false, why: 'Choose a listed value.' };
      return { ok: true, value: input.value };
    };
  } else if (o.type === 'integer') {
    input = el('input');
    input.type = 'number';
    input.step = '1';
    input.inputMode = 'numeric';
    const min = int(o.min);
    const max = int(o.max);
    if (min !== null) input.min = String(min);
    if (max !== null) input.max = String(max);
    if (int(o.default) !== null) input.value = String(o.default);
    hint.textContent = min !== null && max !== null ? `whole number, ${min} … ${max}` : 'whole number';
    read = () => {
      const t = input.value.trim();
      if (t === '')
        return required ? { ok: false, why: 'Enter a number.' } : { ok: true, skip: true };
      if (!/^-?\d+$/.test(t)) return { ok: false, why: 'Enter a whole number.' };
      const n = Number(t);
      if (!Number.isSafeInteger(n) || (min !== null && n < min) || (max !== null && n > max))
        return { ok: false, why: min !== null && max !== null ? `Between ${min} and ${max}.` : 'Out of range.' };
      return { ok: true, value: n };
    };
  } else {
    input = el('input');
    input.type = 'text';
    input.autocomplete = 'off';
    input.spellcheck = false;
    const maxLen = int(o.maxLength);
    if (maxLen !== null && maxLen > 0) input.maxLength = maxLen;
    // The schema's pattern is POSIX ERE, checked by the server.  The
    // browser's pattern attribute is JavaScript's "v" syntax: set it only
    // when it compiles there; the "u" check below stands in otherwise.
    let re = null;
    const pat = str(o.pattern);
    if (pat) {
      try {
        re = new RegExp(pat, 'u');
      } catch {
        re = null;
      }
      try {
        new RegExp(pat, 'v'); // eslint-disable-line no-new
        input.pattern = pat;
      } catch { /* the server decides */ }
      input.dataset.pattern = pat;
    }
    if (typeof o.default === 'string') input.value = o.default;
    hint.textContent = [maxLen !== null ? `at most ${maxLen} characters` : null,
      pat ? `pattern ${pat}` : null].filter(Boolean).join(', ') || 'text';
    read = () => {
      const t = input.value;
      if (t === '')
        return required ? { ok: false, why: 'Enter a value.' } : { ok: true, skip: true };
      if (maxLen !== null && [...t].length > maxLen)
        return { ok: false, why: `At most ${maxLen} characters.` };
      // Control characters never fit an option (MI-3).
      if (/[\u0000-\u001f\u007f-\u009f]/u.test(t)) return { ok: false, why: 'No control characters.' };
      if (re && !re.test(t)) return { ok: false, why: 'Does not match the pattern.' };
      return { ok: true, value: t };
    };
  }
  input.id = id;
  input.name = o.name;
  input.dataset.option = o.name;
  if (required && o.type !== 'boolean') {
    input.required = true;
    lab.append(el('span', 'req', ' *'));
  }
  input.setAttribute('aria-describedby', `${id}-hint`);
  hint.id = `${id}-hint`;
  const row = h('div', 'opt-row', lab, input, hint, err);
  row.dataset.option = o.name;
  row.dataset.type = o.type;
  return {
    row,
    read() {
      const r = read();
      err.textContent = r.ok ? '' : r.why;
      row.dataset.invalid = String(!r.ok);
      input.setAttribute('aria-invalid', String(!r.ok));
      return r;
    },
    focus: () => input.focus(),
  };
}

// ---- a mission card ----

class Card {
  constructor(m, view) {
    this.m = m;
    this.view = view;
    this.key = schemaKey(m);
    this.busy = false;
    const root = el('article', 'card mission-card');
    root.dataset.mission = m.id;
    this.root = root;

    this.runPill = pill('running', 'warn');
    this.runPill.classList.add('running-pill', 'elapsed');
    this.runPill.setAttribute('role', 'timer');
    this.runPill.hidden = m.running !== true;
    this.stopTick = null;
    const title = el('h3', null, str(m.label) || m.id);
    root.append(h('div', 'card-head', title, this.runPill));

    const dl = el('dl', 'facts');
    const fact = (k, v, cls) => dl.append(el('dt', null, k), el('dd', cls, v));
    fact('Id', m.id, 'mono mission-id');
    fact('Agent', fmt(str(m.agent)), 'mono mission-agent');
    fact('Trigger', triggerText(m), 'trigger');
    fact('Outputs', outputsText(m.outputs), 'outputs');
    const perms = Array.isArray(m.permissions) ?
      m.permissions.filter((p) => typeof p === 'string') : [];
    fact('Permissions', perms.length ? perms.join(', ') : 'none', 'permissions mono');
    root.append(dl);

    this.last = el('div', 'last-run-wrap');
    this.last.append(lastRunBlock(m));
    root.append(this.last);

    this.fields = m.options.map((o) => field(m, o));
    const form = el('form', 'mission-form');
    form.noValidate = true; // our messages, not the browser's bubbles
    if (this.fields.length) {
      const fs = el('fieldset', 'opts');
      fs.append(el('legend', null, 'Options'), ...this.fields.map((f) => f.row));
      form.append(fs);
    } else {
      form.append(el('p', 'meta no-options', 'This mission has no options.'));
    }
    this.runBtn = button('Run', 'primary run-mission');
    this.runBtn.type = 'submit';
    this.runBtn.setAttribute('aria-label', `Run ${str(m.label) || m.id}`);
    this.note = el('span', 'mission-note meta');
    this.note.setAttribute('role', 'status');
    if (m.manual !== true) {
      this.runBtn.disabled = true;
      this.note.textContent = 'Runs on its schedule only.';
    }
    form.append(h('div', 'card-foot mission-actions', this.runBtn, this.note));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.run();
    });
    root.append(form);

    this.result = el('div', 'mission-result viewer');
    this.result.setAttribute('aria-live', 'polite');
    this.result.hidden = true;
    root.append(this.result);
    this.sync(m);
  }

  // A fresh list entry with the same schema: running state and last run.
  sync(m) {
    this.m = m;
    const running = m.running === true || this.busy;
    this.runPill.hidden = !running;
    this.root.dataset.running = String(running);
    this.runBtn.disabled = m.manual !== true || running;
    this.last.replaceChildren(lastRunBlock(m));
    if (running) this.clock(int(m.elapsedMs) ?? 0);
    else this.halt();
  }

  // One clock per running mission, whoever started it: the running pill
  // (and this page's result, while it waits) count from sinceMs.  A clock
  // already going keeps going.
  clock(sinceMs) {
    if (this.stopTick) return;
    this.stopTick = ticker((s) => {
      const t = fmtElapsed(s);
      this.runPill.textContent = `running ${t}`;
      const p = this.result.querySelector('.run-elapsed');
      if (p) p.textContent = `running… ${t}`;
    }, Math.max(0, sinceMs));
  }

  halt() {
    this.stopTick?.();
    this.stopTick = null;
    this.runPill.textContent = 'running';
  }

  options() {
    const out = {};
    let first = null;
    for (let i = 0; i < this.fields.length; i++) {
      const r = this.fields[i].read();
      if (!r.ok) {
        first ??= this.fields[i];
        continue;
      }
      if (!r.skip) out[this.m.options[i].name] = r.value;
    }
    if (first) {
      first.focus();
      return null;
    }
    return out;
  }

  async run() {
    if (this.busy || this.m.manual !== true) return;
    const opts = this.options();
    if (opts === null) {
      this.note.textContent = 'Fix the marked options first.';
      return;
    }
    this.busy = true;
    this.runBtn.disabled = true;
    this.note.textContent = 'Running…';
    this.result.hidden = false;
    this.result.dataset.state = 'running';
    // The request stays open until the run ends (up to the mission's
    // timeout): the pill counts meanwhile.
    const counter = pill('running…', 'muted');
    counter.classList.add('run-elapsed', 'elapsed');
    counter.setAttribute('role', 'timer');
    this.result.replaceChildren(h('div', 'viewer-head', counter),
      el('p', 'meta mission-nostop', NO_STOP));
    this.halt();
    this.sync(this.m);
    const body = Object.keys(opts).length ? { options: opts } : {};
    const res = await postJSON(`/api/missions/${seg(this.m.id)}/run`, body,
      this.view.ctrl.signal, RUN_MS);
    if (res.kind === 'aborted') return;
    this.busy = false;
    this.note.textContent = '';
    this.show(res);
    // The run has ended; the list (asked again now) says what else runs.
    this.sync({ ...this.m, running: false });
    this.view.refresh();
  }

  show(res) {
    const v = this.result;
    const d = res.data;
    // A finished run answers 200 with ok true (success) or false (error,
    // denied, skipped): both carry the neutral result.
    if ((res.kind === 'ok' || (res.kind === 'refused' && res.status === 200)) &&
      d && typeof d.status === 'string') {
      v.dataset.state = 'done';
      v.replaceChildren(el('div', 'out-label', 'This run'), resultFacts(d, 'run-facts'));
      return;
    }
    v.dataset.state = res.kind;
    if (res.kind === 'unavailable' || res.kind === 'signed-out') {
      v.replaceChildren(panelFor(res, 'Running missions'));
      return;
    }
    const code = res.code || (res.status ? `HTTP ${res.status}` : 'unreachable');
    const p = pill(code, 'bad');
    p.classList.add('error-pill');
    v.dataset.code = code;
    v.replaceChildren(h('p', 'error-msg', p, ' ',
      REFUSED[res.code] || (res.status ? 'cordon refused the run.' : 'Cannot reach cordon.')));
  }
}

// ---- the view ----

export const missionsView = {
  title: 'Missions',
  mount(root) {
    this.gen = (this.gen || 0) + 1;
    this.ctrl = new AbortController();
    this.cards = new Map(); // id -> Card
    this.root = root;
    this.list = el('div', 'cards missions-list');
    this.body = el('div', 'missions-body');
    this.body.append(loadingPanel());
    const intro = el('p', 'meta missions-intro',
      'Jobs you configured in missions/*.yaml. Run one by hand with its options, ' +
      'or let its schedule run it. Results are neutral: status, duration and counts only.');
    root.replaceChildren(viewHead('Missions'), intro, this.body);
    this.tick(this.gen);
  },

  refresh() {
    clearTimeout(this.timer);
    this.tick(this.gen);
  },

  async tick(gen) {
    clearTimeout(this.timer);
    this.pollCtrl?.abort();
    const ctrl = new AbortController();
    this.pollCtrl = ctrl;
    const res = await getJSON('/api/missions', ctrl.signal, { missing: true });
    if (gen !== this.gen || res.kind === 'aborted') return;
    if (res.kind === 'ok' && Array.isArray(res.data.missions)) {
      this.render(res.data.missions.filter(validMission));
    } else {
      for (const c of this.cards.values()) c.halt();
      this.cards.clear();
      this.list.replaceChildren();
      this.body.replaceChildren(res.kind === 'ok' ?
        errorPanel('cordon answered something this page does not understand.') :
        panelFor(res, 'Missions'));
      this.body.dataset.state = res.kind;
      if (res.kind === 'unavailable') {
        this.root.dataset.state = 'unavailable';
        return; // it will not appear by waiting
      }
    }
    const running = [...this.cards.values()].some((c) => c.m.running === true);
    this.timer = setTimeout(() => this.tick(gen), pollDelay(running ? RUNNING_POLL_MS : POLL_MS));
  },

  render(list) {
    this.body.dataset.state = 'ok';
    const seen = new Set();
    for (const m of list) {
      if (seen.has(m.id)) continue; // ids are unique; keep the first
      seen.add(m.id);
      const c = this.cards.get(m.id);
      // Keep what the operator typed: rebuild only for a changed schema.
      if (c && (c.key === schemaKey(m) || c.busy)) c.sync(m);
      else {
        const n = new Card(m, this);
        c?.halt();
        if (c) c.root.replaceWith(n.root);
        this.cards.set(m.id, n);
      }
    }
    for (const [id, c] of [...this.cards])
      if (!seen.has(id)) {
        c.halt();
        c.root.remove();
        this.cards.delete(id);
      }
    // The server's order; nodes move only when it changed (moving one
    // would take the focus away from a field being typed in).
    const order = [...seen].map((id) => this.cards.get(id).root);
    const now = [...this.list.children];
    if (order.length !== now.length || order.some((n, i) => n !== now[i]))
      this.list.replaceChildren(...order);
    const want = this.cards.size ? this.list :
      el('p', 'panel missions-empty', 'No missions are configured. Add one as missions/NAME.yaml (see the operator guide).');
    if (this.body.firstChild !== want) this.body.replaceChildren(want);
    this.body.dataset.count = String(this.cards.size);
  },

  unmount() {
    this.gen++;
    clearTimeout(this.timer);
    this.pollCtrl?.abort();
    this.ctrl?.abort();
    for (const c of this.cards.values()) c.halt();
    this.cards = new Map();
  },
};
