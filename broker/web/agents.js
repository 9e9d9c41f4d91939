// cordon dashboard: the Agents view (cards with readiness, version and
// missing secrets by name, API-2) and the agent page that holds the room
// and the Control Room.  Also the chat-storage settings (DA-2).

import { getJSON, pollDelay, seg, stopPoll } from './api.js';
import {
  el, h, button, pill, fmt, viewHead, panelFor, loadingPanel, errorPanel, notLive,
} from './dom.js';
import * as store from './chatstore.js';
import { Room } from './room.js';
import { ControlRoom } from './control.js';

const POLL_MS = 10000;
const READY = { live: 'ok', degraded: 'warn', offline: 'bad' };

function readiness(a) {
  const r = a.readiness && typeof a.readiness === 'object' ? a.readiness : {};
  // Not probed yet: the spawner says "offline"; show that it is checking.
  const st = r.probed === false ? 'checking' :
    typeof r.status === 'string' ? r.status : 'unknown';
  const p = pill(st, READY[st] || 'muted');
  p.classList.add('readiness');
  p.dataset.status = st;
  const why = st === 'checking' ? null : notLive(r);
  if (why) p.title = why;
  return { pill: p, version: typeof r.version === 'string' ? r.version : null, why };
}

function names(list) {
  return Array.isArray(list) ? list.filter((s) => typeof s === 'string') : [];
}

// SBX-1..5: what the agent's runs are confined by, as the spawner plans it.
function sandboxBadge(sb) {
  if (!sb || typeof sb !== 'object') return null;
  const iso = typeof sb.isolation === 'string' ? sb.isolation : 'sandbox';
  const text = sb.network === 'none' ? `${iso}, no network` : iso;
  const p = pill(text, sb.enforced === true ? 'ok' : 'warn');
  p.classList.add('sandbox-badge');
  p.dataset.enforced = String(sb.enforced === true);
  const layers = Array.isArray(sb.layers) ? sb.layers.filter((l) => typeof l === 'string') : [];
  p.title = sb.enforced === true ? `Layers: ${layers.join(', ') || 'none'}` :
    `Not every layer applies${typeof sb.reason === 'string' ? `: ${sb.reason}` : ''}`;
  return p;
}

// EG-1, EG-2: how the agent's runs reach the network, and for `proxy`
// the hosts they may reach (as the spawner canonicalised them).
const NETWORK = { none: 'none', allow: 'any host (no proxy)', proxy: 'proxy, allowlist only' };

function networkFact(sb) {
  const net = sb && typeof sb.network === 'string' ? sb.network : null;
  if (!net) return null;
  const box = el('span', 'network');
  box.dataset.network = net;
  box.append(el('span', 'network-mode', NETWORK[net] || net));
  const allow = sb.egress && Array.isArray(sb.egress.allow) ?
    sb.egress.allow.filter((s) => typeof s === 'string') : [];
  if (net === 'proxy' && allow.length) {
    const ul = el('ul', 'allowlist');
    ul.setAttribute('aria-label', 'Allowed hosts');
    for (const rule of allow) ul.append(h('li', null, el('code', null, rule)));
    box.append(ul);
  }
  return box;
}

function agentCard(a) {
  const card = el('article', 'card agent-card');
  card.dataset.agent = a.name;
  const r = readiness(a);
  const title = el('a', 'card-title', typeof a.displayName === 'string' ? a.displayName : a.name);
  title.href = `#agent/${encodeURIComponent(a.name)}`;
  card.append(h('div', 'card-head', h('h3', null, title), r.pill));
  if (typeof a.description === 'string') card.append(el('p', 'card-desc', a.description));
  if (r.why) card.append(el('p', 'notice not-live', `Not live: ${r.why}.`));
  const dl = el('dl', 'facts');
  const fact = (k, v, cls) => {
    const d = el('dd', cls, v);
    dl.append(el('dt', null, k), d);
    return d;
  };
  fact('Name', a.name, 'mono');
  fact('Transport', fmt(a.transport));
  fact('Version', fmt(r.version), 'version');
  const actions = Array.isArray(a.actions) ? a.actions.length : 0;
  fact('Actions', String(actions));
  const badge = sandboxBadge(a.sandbox);
  if (badge) fact('Sandbox', null, 'sandbox').append(badge);
  const net = networkFact(a.sandbox);
  if (net) fact('Network', null, 'network-fact').append(net);
  const missing = names(a.missingSecrets);
  const ms = fact('Missing secrets', missing.length ? missing.join(', ') : 'none',
    missing.length ? 'missing bad mono' : 'missing');
  ms.dataset.count = String(missing.length);
  card.append(dl);
  if (a.hasKey && typeof a.hasKey === 'object') {
    const keys = el('ul', 'keys');
    for (const [k, v] of Object.entries(a.hasKey)) {
      const li = h('li', v === true ? 'key-ok' : 'key-missing', el('code', null, k),
        v === true ? ' set' : ' missing');
      keys.append(li);
    }
    if (keys.childElementCount) card.append(keys);
  }
  const open = el('a', 'btn primary open-room', 'Open room');
  open.href = title.href;
  card.append(h('div', 'card-foot', open));
  return card;
}

function validAgent(a) {
  return a && typeof a === 'object' && typeof a.name === 'string' &&
    /^[a-z0-9][a-z0-9-]{0,63}$/.test(a.name);
}

// DA-2 settings: memory only, and clear every stored chat.
function chatSettings() {
  const box = el('section', 'panel settings');
  const cb = el('input');
  cb.type = 'checkbox';
  cb.id = 'memory-only';
  cb.checked = store.settings().memoryOnly;
  const lab = el('label', null, ' Keep chats in memory only (nothing stored in this browser)');
  lab.htmlFor = 'memory-only';
  lab.prepend(cb);
  const note = el('span', 'settings-note', '');
  note.setAttribute('role', 'status');
  cb.addEventListener('change', () => {
    store.setMemoryOnly(cb.checked);
    note.textContent = cb.checked ? 'Chats are now kept in memory only.' : 'Chats are now stored in this browser.';
  });
  const clr = button('Clear all chat cache', 'clear-cache', () => {
    const n = store.clearAll();
    note.textContent = n ? 'All chats cleared.' : 'There were no chats to clear.';
  });
  box.append(el('h3', null, 'Chat storage'), h('p', null, lab), h('p', 'settings-row', clr, note));
  return box;
}

function firstRunHint() {
  const p = el('div', 'panel first-run');
  const health = el('a', null, 'Health');
  health.href = '#health';
  const vault = el('a', null, 'Vault');
  vault.href = '#vault';
  p.append(el('h3', null, 'Getting started'),
    el('p', null, 'Open an agent’s room to send it a prompt: the answer streams in ' +
      'and is saved as a draft note. The Control Room beside the chat runs the ' +
      'agent’s read-only actions.'),
    h('p', null, 'Saved answers are in the ', vault, '; ', health,
      ' shows each part of cordon and how it is confined.'));
  return p;
}

export const agentsView = {
  title: 'Agents',
  mount(root) {
    this.root = root;
    this.body = el('div', 'agents-body');
    this.body.append(loadingPanel());
    const parts = [viewHead('Agents')];
    // First run: no chat in this browser yet.
    if (!store.any()) parts.push(firstRunHint());
    root.replaceChildren(...parts, this.body, chatSettings());
    this.gen = (this.gen || 0) + 1;
    this.tick(this.gen);
  },
  async tick(gen) {
    this.ctrl = new AbortController();
    const res = await getJSON('/api/agents', this.ctrl.signal);
    if (gen !== this.gen || res.kind === 'aborted') return;
    if (res.kind === 'ok' && Array.isArray(res.data.agents)) {
      const list = res.data.agents.filter(validAgent);
      const grid = el('div', 'cards');
      grid.append(...list.map(agentCard));
      if (!list.length) grid.append(el('p', 'panel', 'No agents are configured.'));
      this.body.replaceChildren(grid);
      this.body.dataset.state = 'ok';
    } else {
      this.body.replaceChildren(panelFor(res, 'The agent list'));
      this.body.dataset.state = res.kind;
      if (res.kind === 'unavailable') return; // it will not appear by waiting
    }
    this.timer = setTimeout(() => this.tick(gen), pollDelay(POLL_MS));
  },
  unmount() {
    this.gen++;
    stopPoll(this);
  },
};

export const agentView = {
  title: 'Agent',
  async mount(root, name) {
    this.gen = (this.gen || 0) + 1;
    const gen = this.gen;
    this.ctrl = new AbortController();
    root.replaceChildren(viewHead('Agent'), loadingPanel());
    if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(name)) {
      root.replaceChildren(viewHead('Agent'), errorPanel('cordon knows no such agent.'));
      return;
    }
    const res = await getJSON(`/api/agents/${seg(name)}`, this.ctrl.signal);
    if (gen !== this.gen || res.kind === 'aborted') return;
    if (res.kind !== 'ok' || !validAgent(res.data.agent)) {
      const p = res.kind === 'refused' && res.code === 'unknown-agent' ?
        errorPanel('cordon knows no such agent.') : panelFor(res, 'The agent page');
      root.replaceChildren(viewHead('Agent'), p);
      root.dataset.state = res.kind;
      return;
    }
    const a = res.data.agent;
    const r = readiness(a);
    document.title = `${a.displayName || a.name} · cordon`;
    const back = el('a', 'back', '← Agents');
    back.href = '#agents';
    this.room = new Room(a.name);
    this.control = new ControlRoom(a.name, Array.isArray(a.actions) ? a.actions : []);
    const missing = names(a.missingSecrets);
    const head = viewHead(typeof a.displayName === 'string' ? a.displayName : a.name,
      h('div', 'agent-status', r.pill, el('span', 'version', fmt(r.version)), back));
    const parts = [head];
    if (r.why) parts.push(el('p', 'notice not-live', `Not live: ${r.why}.`));
    // SP-12: which program, on which PATH, or under which home.
    const rd = a.readiness && typeof a.readiness === 'object' ? a.readiness : {};
    if (r.why && typeof rd.detail === 'string') parts.push(el('p', 'notice not-live-detail mono', rd.detail));
    // SBX-9: the agent's own private home (its CLI's config and login).
    if (typeof a.home === 'string')
      parts.push(h('p', 'agent-home', 'Private home: ', el('code', 'mono', a.home)));
    if (missing.length)
      parts.push(el('p', 'notice', `Missing secrets: ${missing.join(', ')}. Runs will be refused until they are set.`));
    parts.push(h('div', 'agent-grid', this.room.root, this.control.root));
    root.replaceChildren(...parts);
    root.dataset.state = 'ok';
    this.room.input.focus();
  },
  unmount() {
    this.gen++;
    this.ctrl?.abort();
    this.room?.unmount();
    this.control?.unmount();
    this.room = null;
    this.control = null;
  },
};
