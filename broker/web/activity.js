// cordon dashboard: the Activity view (API-8) — the audit tail, newest
// first, filtered by kind and agent, refreshed live while shown.  Records
// are shown field by field as text; auditd has already redacted them.

import { getJSON, pollDelay, stopPoll } from './api.js';
import {
  el, h, fmt, fmtTime, viewHead, headRow, panelFor, loadingPanel,
} from './dom.js';

const POLL_MS = 3000;
const LIMIT = 200;
// AU-3
const KINDS = ['agent.invoke', 'agent.invoke.complete', 'agent.invoke.error',
  'agent.action', 'vault.write', 'vault.update', 'mission.run', 'verb.run',
  'http.request', 'system.boot', 'system.shutdown', 'audit.retention'];
const HIDDEN = new Set(['ts', 'id', 'kind', 'agent', 'seq', 'prev']);

function select(id, label, values) {
  const s = el('select');
  s.id = id;
  s.append(new Option(`All ${label}`, ''));
  for (const v of values) s.append(new Option(v, v));
  const l = el('label', 'filter', `${label[0].toUpperCase()}${label.slice(1, -1)} `);
  l.htmlFor = id;
  return { s, l: h('span', 'filter', l, s) };
}

function details(r) {
  const out = [];
  for (const [k, v] of Object.entries(r)) {
    if (HIDDEN.has(k) || v === null || v === undefined) continue;
    const t = typeof v === 'object' ? JSON.stringify(v) : String(v);
    out.push(`${k}=${t.length > 120 ? `${t.slice(0, 117)}…` : t}`);
  }
  return out.join('  ');
}

function row(r) {
  const tr = el('tr');
  tr.dataset.kind = String(r.kind);
  if (typeof r.agent === 'string') tr.dataset.agent = r.agent;
  const time = el('td', 'ts mono', fmtTime(r.ts));
  time.title = fmt(r.ts);
  tr.append(time, el('td', 'kind mono', fmt(r.kind)), el('td', 'agent', fmt(r.agent)),
    el('td', 'details mono', details(r)));
  return tr;
}

export const activityView = {
  title: 'Activity',
  mount(root) {
    this.gen = (this.gen || 0) + 1;
    this.agents = new Set();
    const k = select('filter-kind', 'kinds', KINDS);
    const a = select('filter-agent', 'agents', []);
    this.kind = k.s;
    this.agent = a.s;
    this.live = el('input');
    this.live.type = 'checkbox';
    this.live.id = 'activity-live';
    this.live.checked = true;
    const liveLab = el('label', 'filter', ' Live');
    liveLab.htmlFor = 'activity-live';
    liveLab.prepend(this.live);
    this.updated = el('span', 'updated', 'Updated never');
    const refresh = () => this.restart();
    this.kind.addEventListener('change', refresh);
    this.agent.addEventListener('change', refresh);
    this.live.addEventListener('change', refresh);
    this.body = el('div', 'activity-body');
    this.body.append(loadingPanel());
    root.replaceChildren(viewHead('Activity', this.updated),
      h('div', 'filters', k.l, a.l, liveLab), this.body);
    this.root = root;
    this.tick(this.gen);
  },

  restart() {
    this.stopTimer();
    this.gen++;
    this.tick(this.gen);
  },

  stopTimer() {
    stopPoll(this);
  },

  async tick(gen) {
    this.ctrl = new AbortController();
    const q = new URLSearchParams();
    if (this.kind.value) q.set('kind', this.kind.value);
    if (this.agent.value) q.set('agent', this.agent.value);
    q.set('limit', String(LIMIT));
    const res = await getJSON(`/api/audit?${q}`, this.ctrl.signal);
    if (gen !== this.gen || res.kind === 'aborted') return;
    if (res.kind === 'ok' && Array.isArray(res.data.records)) {
      this.render(res.data.records.filter((r) => r && typeof r === 'object'));
      this.root.dataset.state = 'ok';
    } else {
      this.body.replaceChildren(panelFor(res, 'The activity log'));
      this.root.dataset.state = res.kind;
      if (res.kind === 'unavailable') return;
    }
    if (this.live.checked)
      this.timer = setTimeout(() => this.tick(gen), pollDelay(POLL_MS));
  },

  render(records) {
    // Newest first: by the chain's seq where both have one (AU-7).
    const sorted = [...records].sort((x, y) => (Number.isInteger(x.seq) && Number.isInteger(y.seq) ?
      y.seq - x.seq : String(y.ts).localeCompare(String(x.ts))));
    for (const r of sorted) {
      if (typeof r.agent === 'string' && !this.agents.has(r.agent)) {
        this.agents.add(r.agent);
        this.agent.append(new Option(r.agent, r.agent));
      }
    }
    const table = el('table', 'records');
    const tb = el('tbody');
    tb.id = 'activity-rows';
    tb.append(...sorted.map(row));
    table.append(headRow(['Time', 'Kind', 'Agent', 'Details']), tb);
    this.body.replaceChildren(sorted.length ? h('div', 'table-wrap', table) :
      el('p', 'panel', 'No records match.'));
    this.updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  },

  unmount() {
    this.gen++;
    this.stopTimer();
  },
};
