// cordon dashboard: the Control Room of an agent (DA-1, API-5).  One chip
// per manifest action; the answer in a monospace viewer with exit code,
// duration and a "truncated" badge, or a classified error pill with the
// stock message (never text derived from stderr).

import { postJSON, seg } from './api.js';
import {
  el, h, pill, fmtMs, fmtElapsed, ticker, unavailablePanel, signedOutPanel,
} from './dom.js';

const ACTION_MS = 70000; // SP-8 clamps actions to 60 s; allow the grace

const REFUSED = {
  'unknown-action': 'This agent has no such action.',
  'unknown-agent': 'cordon knows no such agent.',
  busy: 'Too many runs at once. Try again shortly.',
};

function outBlock(label, text, cls) {
  return h('div', `out-block ${cls}`,
    el('div', 'out-label', label),
    el('pre', 'out mono', text === '' ? '(empty)' : text));
}

export class ControlRoom {
  constructor(agent, actions) {
    this.agent = agent;
    this.ctrl = new AbortController();
    this.viewer = el('div', 'viewer');
    this.viewer.setAttribute('aria-live', 'polite');
    const chips = el('div', 'chips');
    for (const a of actions) {
      if (!a || typeof a.id !== 'string') continue;
      const c = el('button', 'chip', typeof a.label === 'string' ? a.label : a.id);
      c.type = 'button';
      c.dataset.action = a.id;
      if (typeof a.hint === 'string') {
        c.title = a.hint;
        c.append(el('span', 'chip-hint', a.hint));
      }
      c.addEventListener('click', () => this.run(a, c));
      chips.append(c);
    }
    if (!chips.childElementCount)
      chips.append(el('p', 'muted', 'This agent declares no actions.'));
    else
      this.viewer.append(el('p', 'viewer-empty', 'Choose an action to run it.'));
    this.root = h('section', 'control',
      el('h3', null, 'Control Room'), chips, this.viewer);
  }

  async run(a, chip) {
    for (const c of this.root.querySelectorAll('.chip')) c.disabled = true;
    chip.classList.add('is-running');
    const label = typeof a.label === 'string' ? a.label : a.id;
    const run = pill('running…', 'muted');
    run.classList.add('elapsed');
    this.viewer.replaceChildren(h('div', 'viewer-head', el('strong', null, label), run));
    this.viewer.dataset.state = 'running';
    const stop = ticker((s) => { run.textContent = `running… ${fmtElapsed(s)}`; });
    const res = await postJSON(`/api/agents/${seg(this.agent)}/actions/${seg(a.id)}`,
      {}, this.ctrl.signal, ACTION_MS);
    stop();
    if (res.kind === 'aborted') return;
    chip.classList.remove('is-running');
    for (const c of this.root.querySelectorAll('.chip')) c.disabled = false;
    this.show(label, a.id, res);
  }

  show(label, id, res) {
    const v = this.viewer;
    const head = h('div', 'viewer-head', el('strong', null, label));
    v.dataset.action = id;
    const d = res.data;
    if (res.kind === 'ok') {
      v.dataset.state = 'ok';
      if (Number.isInteger(d.exitCode)) head.append(el('span', 'meta', `exit ${d.exitCode}`));
      if (Number.isFinite(d.durationMs)) head.append(el('span', 'meta', fmtMs(d.durationMs)));
      if (d.truncated === true) head.append(pill('truncated', 'warn'));
      v.replaceChildren(head,
        outBlock('stdout', typeof d.stdout === 'string' ? d.stdout : '', 'stdout'));
      if (typeof d.stderr === 'string' && d.stderr !== '')
        v.append(outBlock('stderr', d.stderr, 'stderr'));
      return;
    }
    if (res.kind === 'refused' && d && typeof d.errorClass === 'string') {
      // API-5 fail-soft: HTTP 200 {ok:false, errorClass, errorMessage}.
      v.dataset.state = 'error';
      const p = pill(d.errorClass, 'bad');
      p.classList.add('error-pill');
      head.append(p);
      if (d.truncated === true) head.append(pill('truncated', 'warn'));
      v.replaceChildren(head, el('p', 'error-msg',
        typeof d.errorMessage === 'string' ? d.errorMessage : ''));
      return;
    }
    v.dataset.state = res.kind;
    if (res.kind === 'unavailable') {
      v.replaceChildren(head, unavailablePanel('Running actions'));
    } else if (res.kind === 'signed-out') {
      v.replaceChildren(head, signedOutPanel());
    } else {
      const code = res.code || (res.status ? `HTTP ${res.status}` : 'unreachable');
      const p = pill(code, 'bad');
      p.classList.add('error-pill');
      head.append(p);
      v.replaceChildren(head, el('p', 'error-msg',
        REFUSED[res.code] || (res.status ? 'cordon refused the action.' : 'Cannot reach cordon.')));
    }
  }

  unmount() {
    this.ctrl.abort();
  }
}
