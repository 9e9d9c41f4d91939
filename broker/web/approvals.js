// cordon dashboard: approvals (SBX-7).  A gate rule that says `ask` holds
// the agent's command in the spawner until the operator answers; this
// module polls GET /api/approvals, announces waiting commands on every page
// (header banner and nav count), and holds the Approvals view: one card per
// held command with Allow, Deny and a countdown to the automatic deny.
//
// Arguments arrive scrubbed by the spawner and are shown as text only.
// Countdowns run on the server's clock: each answer carries `now`, and the
// page adds the monotonic time since it arrived, so a skewed local clock
// changes nothing.

import { auth, getJSON, onAuth, postJSON, seg } from './api.js';
import { $, el, h, button, pill, fmt, viewHead, panelFor, loadingPanel } from './dom.js';

const FAST_MS = 1000; // the view is open, or something waits
const SLOW_MS = 5000; // nothing waits and nobody looks
const HIDDEN_MS = 30000; // the tab is in the background
const ERROR_MS = 5000;
// The first request waits for the view's own to say whether this page is
// signed in (a signed-out page asks nothing more); a view that asks
// nothing gets this one after a short while.
const FIRST_MS = 1500;
const ID_RE = /^[0-9a-f]{16}$/;
// A card that leaves the list this close to its expiry timed out.
const EXPIRY_SLACK_MS = 1500;

function str(v) {
  return typeof v === 'string' ? v : null;
}

function valid(a) {
  return a && typeof a === 'object' && typeof a.id === 'string' && ID_RE.test(a.id) &&
    typeof a.agent === 'string' && typeof a.verb === 'string' &&
    Number.isFinite(a.expires);
}

// ---- the watcher: one poller for the banner, the nav and the view ----

const listeners = new Set();

export const approvals = {
  state: 'idle', // idle | ok | unavailable | signed-out | error
  last: null, // the last classified answer that was not ok
  list: [], // valid held approvals, as the server sent them
  serverNow: 0, // the server's `now` (ms since the epoch) ...
  at: 0, // ... and performance.now() when it arrived
  viewing: false,
  timer: null,
  ctrl: null,
  gen: 0,
  decided: new Set(), // ids answered from this page, dropped until gone

  // The server's clock now, in ms since the epoch.
  now() {
    return this.serverNow + (performance.now() - this.at);
  },

  waiting() {
    return this.list.filter((a) => !this.decided.has(a.id) && a.expires > this.now()).length;
  },

  onChange(f) {
    listeners.add(f);
    return () => listeners.delete(f);
  },

  changed() {
    for (const f of listeners) f(this);
  },

  start() {
    onAuth((out) => {
      if (out) return;
      if (this.state === 'signed-out' || this.state === 'idle') this.poll(0);
    });
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && this.state !== 'unavailable' && this.state !== 'signed-out')
        this.poll(0);
    });
    if (auth.known && !auth.signedOut) this.poll(0);
    else if (!auth.known) this.poll(FIRST_MS);
    else this.setState('signed-out', { kind: 'signed-out' });
  },

  setViewing(v) {
    const was = this.viewing;
    this.viewing = v;
    if (v && !was && this.state !== 'unavailable' && this.state !== 'signed-out')
      this.poll(0);
  },

  // (Re)schedule the next request in `ms`; 0 asks at once.
  poll(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), ms);
  },

  period() {
    if (document.hidden) return HIDDEN_MS;
    if (this.viewing || this.waiting() > 0) return FAST_MS;
    return SLOW_MS;
  },

  async tick() {
    this.timer = null;
    // Signed out: nothing to ask until a request elsewhere signs back in.
    if (auth.signedOut) {
      this.setState('signed-out', { kind: 'signed-out' });
      return;
    }
    const gen = ++this.gen;
    this.ctrl?.abort();
    const ctrl = new AbortController();
    this.ctrl = ctrl;
    const res = await getJSON('/api/approvals', ctrl.signal, { missing: true });
    if (gen !== this.gen || res.kind === 'aborted') return;
    this.ctrl = null;
    if (res.kind === 'ok' && Array.isArray(res.data.approvals) && Number.isFinite(res.data.now)) {
      this.serverNow = res.data.now;
      this.at = performance.now();
      this.list = res.data.approvals.filter(valid);
      const ids = new Set(this.list.map((a) => a.id));
      for (const id of this.decided) if (!ids.has(id)) this.decided.delete(id);
      this.setState('ok', null);
      this.poll(this.period());
      return;
    }
    if (res.kind === 'ok') res.kind = 'error'; // not the shape we know
    this.list = [];
    this.setState(res.kind === 'refused' ? 'error' : res.kind, res);
    // 501 or no such route: it will not appear by waiting.
    if (res.kind === 'unavailable' || res.kind === 'signed-out') return;
    this.poll(Math.max(ERROR_MS, this.period()));
  },

  setState(state, res) {
    this.state = state;
    this.last = res;
    this.changed();
  },

  // After Allow or Deny from this page: forget it at once, then re-ask.
  answered(id) {
    this.decided.add(id);
    this.changed();
    this.poll(0);
  },
};

// ---- banner and nav count (every page) ----

function waitText(n) {
  return n === 1 ? '1 command waits for your approval' : `${n} commands wait for your approval`;
}

function renderAnnounce(a) {
  const n = a.state === 'ok' ? a.waiting() : 0;
  const count = $('approvals-count');
  count.textContent = n ? String(n) : '';
  count.hidden = n === 0;
  const nav = count.closest('a');
  if (n) nav.setAttribute('aria-label', `Approvals, ${waitText(n)}`);
  else nav.removeAttribute('aria-label');
  const b = $('approvals-banner');
  b.dataset.count = String(n);
  $('approvals-banner-link').textContent = n ? `${waitText(n)} →` : '';
  b.hidden = n === 0;
}

export function startApprovals() {
  approvals.onChange(renderAnnounce);
  approvals.start();
}

// ---- the view ----

function remaining(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

class Card {
  constructor(a, view) {
    this.a = a;
    this.view = view;
    const root = el('article', 'card approval-card');
    root.dataset.id = a.id;
    root.dataset.agent = a.agent;
    root.dataset.verb = a.verb;
    root.dataset.state = 'held';
    this.root = root;

    this.clock = pill('', 'warn');
    this.clock.classList.add('countdown');
    this.clock.setAttribute('role', 'timer');
    const title = h('h3', null, el('code', 'verb', a.verb), ' from ', el('span', 'agent', a.agent));
    root.append(h('div', 'card-head', title, this.clock));

    const dl = el('dl', 'facts');
    const fact = (k, v, cls) => dl.append(el('dt', null, k), el('dd', cls, v));
    fact('Rule', fmt(str(a.rule)), 'rule mono');
    fact('Directory', fmt(str(a.cwd)), 'cwd mono');
    if (str(a.runId)) fact('Run', a.runId, 'run mono');
    root.append(dl);

    // Scrubbed by the spawner; text only, never markup.
    const args = el('pre', 'args out', fmt(str(a.args)));
    args.setAttribute('aria-label', 'Command line');
    root.append(args);

    this.allow = button('Allow', 'primary allow', () => this.decide('allow'));
    this.deny = button('Deny', 'danger deny', () => this.decide('deny'));
    this.allow.setAttribute('aria-label', `Allow ${a.verb} for ${a.agent}`);
    this.deny.setAttribute('aria-label', `Deny ${a.verb} for ${a.agent}`);
    this.note = el('span', 'approval-note');
    this.note.setAttribute('role', 'status');
    root.append(h('div', 'card-foot approval-actions', this.allow, this.deny, this.note));
    this.tick();
  }

  get state() {
    return this.root.dataset.state;
  }

  set state(s) {
    this.root.dataset.state = s;
  }

  tick() {
    if (this.state === 'deciding' || this.state === 'gone') return;
    const ms = this.a.expires - approvals.now();
    this.clock.dataset.remaining = String(Math.max(0, Math.round(ms)));
    if (ms > 0) {
      this.clock.textContent = `${remaining(ms)} left`;
      this.clock.setAttribute('aria-label', `Denied automatically in ${remaining(ms)}`);
      return;
    }
    this.expire();
  }

  // Shown as timed out (and denied: the spawner's timer answers it) until
  // the next refresh that no longer lists it.
  expire() {
    if (this.state === 'timed-out') return;
    this.state = 'timed-out';
    this.outAt = this.view.renders;
    this.clock.textContent = 'timed out — denied';
    this.clock.setAttribute('aria-label', 'Timed out, denied');
    this.clock.className = 'pill pill-bad countdown';
    this.allow.disabled = true;
    this.deny.disabled = true;
  }

  async decide(decision) {
    if (this.state !== 'held') return;
    this.state = 'deciding';
    this.allow.disabled = true;
    this.deny.disabled = true;
    this.note.textContent = decision === 'allow' ? 'Allowing…' : 'Denying…';
    const res = await postJSON(`/api/approvals/${seg(this.a.id)}`, { decision });
    if (!this.view.cards.has(this.a.id)) return; // the view went away
    if (res.kind === 'ok') {
      approvals.answered(this.a.id);
      this.view.remove(this.a.id);
      this.view.say(`${decision === 'allow' ? 'Allowed' : 'Denied'} ${this.a.verb} for ${this.a.agent}.`);
      return;
    }
    if (res.kind === 'refused' && res.code === 'unknown-approval') {
      // Timed out, or its run ended, before the answer arrived.
      this.state = 'gone';
      this.note.textContent = 'No longer waiting (timed out or its run ended).';
      approvals.answered(this.a.id);
      return;
    }
    this.state = 'held';
    this.note.textContent = res.kind === 'signed-out' ? 'Not signed in.' :
      `cordon did not take the answer (${res.code || (res.status ? `HTTP ${res.status}` : 'unreachable')}).`;
    this.tick();
    if (this.state === 'held') {
      this.allow.disabled = false;
      this.deny.disabled = false;
    }
  }
}

export const approvalsView = {
  title: 'Approvals',
  mount(root) {
    this.cards = new Map(); // id -> Card
    this.renders = 0;
    this.list = el('div', 'cards approvals-list');
    this.empty = el('p', 'panel approvals-empty', 'No command is waiting for approval.');
    this.status = el('p', 'approvals-status meta');
    this.status.setAttribute('role', 'status');
    this.body = el('div', 'approvals-body');
    this.body.append(loadingPanel());
    const intro = el('p', 'meta approvals-intro',
      'Commands an agent asked to run that its manifest holds for you. ' +
      'Without an answer, each is denied when its time runs out.');
    root.replaceChildren(viewHead('Approvals', this.status), intro, this.body);
    this.root = root;
    this.off = approvals.onChange(() => this.render());
    this.clock = setInterval(() => this.tick(), 250);
    approvals.setViewing(true);
    if (approvals.state !== 'idle') this.render();
  },

  unmount() {
    this.off?.();
    clearInterval(this.clock);
    approvals.setViewing(false);
    this.cards = new Map();
  },

  say(text) {
    this.status.textContent = text;
  },

  remove(id) {
    const c = this.cards.get(id);
    if (!c) return;
    c.root.remove();
    this.cards.delete(id);
    this.fill();
  },

  // The list or the "nothing waits" panel, whichever applies.
  fill() {
    const want = this.cards.size ? this.list : this.empty;
    if (this.body.firstChild !== want || this.body.childNodes.length !== 1)
      this.body.replaceChildren(want);
    this.body.dataset.count = String(this.cards.size);
  },

  render() {
    const a = approvals;
    this.body.dataset.state = a.state;
    if (a.state !== 'ok') {
      if (a.last) {
        this.cards.clear();
        this.list.replaceChildren();
        this.body.replaceChildren(panelFor(a.last, 'Approving held commands'));
        if (a.state === 'unavailable') this.root.dataset.state = 'unavailable';
      }
      return;
    }
    this.renders++;
    const live = new Map(a.list.map((x) => [x.id, x]));
    // A card whose command is no longer held goes (answered elsewhere, or
    // its run ended); one whose time ran out says so for one refresh first.
    for (const [id, c] of [...this.cards]) {
      if (live.has(id) && (!a.decided.has(id) || c.state === 'gone')) continue;
      if (c.state === 'held' && c.a.expires - a.now() <= EXPIRY_SLACK_MS) c.expire();
      if (c.state !== 'timed-out' || c.outAt < this.renders) this.remove(id);
    }
    for (const x of a.list) {
      if (this.cards.has(x.id) || a.decided.has(x.id)) continue;
      const c = new Card(x, this);
      this.cards.set(x.id, c);
      this.list.append(c.root);
    }
    this.fill();
  },

  tick() {
    for (const c of this.cards.values()) c.tick();
  },
};
