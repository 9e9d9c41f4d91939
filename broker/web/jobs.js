// cordon dashboard: the Jobs view (DA-1, MC-3) — detached jobs, newest
// first, with their state; one opened (#jobs/ID) shows its meta, a Cancel
// button while it runs, and its events rendered as the chat view renders
// a run (room.js), read on from the last offset while it runs.  Text only:
// the spawner cleaned and scrubbed every event before it was kept.

import { getJSON, postJSON, pollDelay, seg, stopPoll } from './api.js';
import {
  el, h, button, fmt, fmtMs, pill, viewHead, headRow, panelFor, loadingPanel,
} from './dom.js';
import { foldEvent, messageNode } from './room.js';

const LIST_MS = 3000;
const EVENTS_MS = 1000;
const STATE_PILL = {
  running: 'muted', succeeded: 'ok', failed: 'bad', cancelled: 'warn', lost: 'bad',
};
const JOB_ID = /^[A-Za-z0-9_-]{1,80}$/;

function statePill(state) {
  const p = pill(String(state), STATE_PILL[state] || 'muted');
  p.classList.add('job-state');
  return p;
}

function fmtWhen(ms) {
  return Number.isFinite(ms) ? new Date(ms).toLocaleString() : fmt(null);
}

function jobLink(id) {
  const a = el('a', 'job-link mono', String(id));
  a.href = `#jobs/${seg(id)}`;
  return a;
}

function listRow(j) {
  const tr = el('tr');
  tr.dataset.job = String(j.jobId);
  tr.dataset.state = String(j.state);
  tr.append(h('td', 'job-id', jobLink(j.jobId)), el('td', 'agent', fmt(j.agent)),
    h('td', 'state', statePill(j.state)), el('td', 'ts', fmtWhen(j.createdMs)),
    el('td', 'num', Number.isFinite(j.durationMs) ? fmtMs(j.durationMs) : fmt(null)),
    el('td', 'num', fmt(j.events)));
  return tr;
}

function metaList(j) {
  const dl = el('dl', 'summary job-meta');
  const item = (k, v) => dl.append(h('div', 'summary-item', el('dt', null, k), h('dd', null, v)));
  item('State', statePill(j.state));
  item('Agent', fmt(j.agent));
  if (j.via) item('Via', String(j.via));
  item('Started', fmtWhen(j.createdMs));
  if (Number.isFinite(j.endedMs)) item('Ended', fmtWhen(j.endedMs));
  if (Number.isFinite(j.durationMs)) item('Duration', fmtMs(j.durationMs));
  if (Number.isInteger(j.exitCode)) item('Exit', String(j.exitCode));
  if (j.errorClass) item('Error', String(j.errorClass));
  if (j.cancelReason) item('Cancelled', j.cancelReason === 'shutdown' ? 'cordon stopped' : 'on request');
  item('Events', `${fmt(j.events)}${j.eventsCut ? ' (cut)' : ''}`);
  return dl;
}

export const jobsView = {
  title: 'Jobs',

  mount(root, param) {
    this.root = root;
    this.gen = (this.gen || 0) + 1;
    this.open(param);
  },

  update(param) {
    this.stopTimer();
    this.gen++;
    this.open(param);
  },

  open(param) {
    this.id = JOB_ID.test(param || '') ? param : '';
    this.body = el('div', 'jobs-body');
    this.body.append(loadingPanel());
    this.updated = el('span', 'updated', 'Updated never');
    if (this.id) {
      this.msg = { role: 'agent', text: '', state: 'running' };
      this.next = 0;
      this.metaBox = el('div', 'job-head');
      this.cancelBtn = button('Cancel job', 'danger cancel-job', () => this.cancel());
      this.cancelBtn.hidden = true;
      this.note = el('p', 'room-note');
      this.note.setAttribute('role', 'status');
      this.log = el('div', 'chat-log job-log');
      this.log.setAttribute('role', 'log');
      const back = el('a', 'back', 'All jobs');
      back.href = '#jobs';
      this.body.replaceChildren(this.metaBox, h('div', 'job-actions', this.cancelBtn, this.note),
        this.log);
      this.metaBox.append(loadingPanel());
      this.root.replaceChildren(viewHead(`Job ${this.id}`, back, this.updated), this.body);
    } else {
      // Stop all reaches the page's own runs only: say where jobs stop.
      const hint = el('p', 'muted jobs-stop-hint',
        'Stop all does not stop detached jobs: open a running job to cancel it.');
      this.root.replaceChildren(viewHead('Jobs', this.updated), hint, this.body);
    }
    this.tick(this.gen);
  },

  stopTimer() {
    stopPoll(this);
  },

  async tick(gen) {
    this.ctrl = new AbortController();
    const again = this.id ? await this.tickJob(gen) : await this.tickList(gen);
    if (gen !== this.gen || again === 0) return;
    this.timer = setTimeout(() => this.tick(gen), pollDelay(again));
  },

  async tickList(gen) {
    const res = await getJSON('/api/jobs', this.ctrl.signal);
    if (gen !== this.gen || res.kind === 'aborted') return 0;
    if (res.kind !== 'ok' || !Array.isArray(res.data.jobs)) {
      this.body.replaceChildren(panelFor(res, 'Jobs'));
      this.root.dataset.state = res.kind;
      return res.kind === 'unavailable' ? 0 : LIST_MS;
    }
    const jobs = res.data.jobs.filter((j) => j && typeof j === 'object' && JOB_ID.test(String(j.jobId)));
    const table = el('table', 'records jobs');
    const tb = el('tbody');
    tb.id = 'jobs-rows';
    tb.append(...jobs.map(listRow));
    table.append(el('caption', null, 'Detached jobs, newest first'),
      headRow(['Job', 'Agent', 'State', 'Started', 'Duration', 'Events']), tb);
    this.body.replaceChildren(jobs.length ? h('div', 'table-wrap', table) :
      h('div', 'panel', h('p', null, 'No jobs yet. A job is a run started without waiting for it, by ',
        el('code', null, 'cordon mcp'), ' (start_job) or POST /api/agents/NAME/jobs.')));
    this.updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    this.root.dataset.state = 'ok';
    return LIST_MS;
  },

  async tickJob(gen) {
    const res = await getJSON(`/api/jobs/${seg(this.id)}/events?offset=${this.next}`, this.ctrl.signal);
    if (gen !== this.gen || res.kind === 'aborted') return 0;
    const d = res.data;
    if (res.kind !== 'ok' || !Array.isArray(d.events) || !d.job || !Number.isInteger(d.next)) {
      this.metaBox.replaceChildren(panelFor(res, 'Jobs'));
      this.root.dataset.state = res.kind;
      return res.kind === 'ok' || res.kind === 'error' ? EVENTS_MS * 3 : 0;
    }
    for (const ev of d.events)
      if (ev && typeof ev === 'object') foldEvent(this.msg, ev);
    this.next = d.next;
    const running = d.job.state === 'running';
    if (!running && this.msg.state === 'running') this.msg.state = d.job.state === 'lost' ? 'interrupted' : 'done';
    this.metaBox.replaceChildren(metaList(d.job));
    this.cancelBtn.hidden = !running;
    const node = messageNode(this.msg).box;
    this.log.replaceChildren(node);
    this.updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    this.root.dataset.state = 'ok';
    this.root.dataset.jobState = String(d.job.state);
    // More to read at once, or the job still runs: read on.
    if (d.events.length && d.next < d.job.events) return 1;
    return running ? EVENTS_MS : 0;
  },

  async cancel() {
    this.cancelBtn.disabled = true;
    const res = await postJSON(`/api/jobs/${seg(this.id)}/cancel`, {});
    this.cancelBtn.disabled = false;
    this.note.textContent = res.kind === 'ok' ? 'Asked cordon to cancel the job.' :
      res.code === 'job-not-running' ? 'The job has already ended.' :
        'cordon did not cancel the job.';
  },

  unmount() {
    this.gen++;
    this.stopTimer();
  },
};
