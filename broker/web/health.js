// cordon dashboard: the Health view (API-1): each daemon, its restarts and
// what it and /proc say of its confinement.  Polls while shown, backs off
// while signed out.

import { getJSON, pollDelay } from './api.js';
import { $, el, h, fmt, DASH, notLive } from './dom.js';

const POLL_MS = 2000;
const AGENTS_POLL_MS = 10000; // manifests change rarely; each GET is audited
const SECCOMP_MODES = { 0: 'off', 1: 'strict', 2: 'filter' };

function isInt(v) {
  return Number.isInteger(v);
}

// One table cell: human text, raw value in data-value for scripts/tests.
function cell(cls, text, raw) {
  const td = el('td', cls, text);
  if (raw !== undefined && raw !== null) td.dataset.value = String(raw);
  return td;
}

function daemonRow(d) {
  const st = d.status && typeof d.status === 'object' ? d.status : null;
  const up = d.up === true;
  const tr = el('tr', up ? 'is-up' : 'is-down');
  tr.dataset.daemon = String(d.name);

  const th = el('th', 'name', d.name);
  th.scope = 'row';
  tr.append(th);

  const state = cell('state', up ? 'up' : 'down', up ? 'up' : 'down');
  state.classList.add(up ? 'ok' : 'bad');
  tr.append(state);

  const pid = up ? (isInt(d.pid) ? d.pid : st?.pid) : null;
  tr.append(cell('pid num', fmt(pid), pid));
  tr.append(cell('restarts num', fmt(d.restarts), d.restarts));
  tr.append(cell('uid num', fmt(st?.uid), st?.uid));

  const caps = cell('caps mono', fmt(st?.capEff), st?.capEff);
  if (typeof st?.capEff === 'string') {
    const none = /^0+$/.test(st.capEff);
    caps.classList.add(none ? 'ok' : 'warn');
    caps.title = none ? 'no effective capabilities' : 'effective capabilities';
  }
  tr.append(caps);

  let nnpText = DASH;
  if (st && isInt(st.noNewPrivs)) nnpText = st.noNewPrivs ? 'yes' : 'no';
  const nnp = cell('nnp', nnpText, st?.noNewPrivs);
  if (nnpText !== DASH) nnp.classList.add(st.noNewPrivs ? 'ok' : 'warn');
  tr.append(nnp);

  let secText = DASH;
  if (st && isInt(st.seccomp)) secText = SECCOMP_MODES[st.seccomp] ?? String(st.seccomp);
  const sec = cell('seccomp', secText, st?.seccomp);
  if (secText !== DASH) sec.classList.add(st.seccomp === 2 ? 'ok' : 'warn');
  tr.append(sec);

  let llText = fmt(st?.landlock);
  if (st && typeof st.landlock === 'string' && isInt(st.landlockAbi))
    llText = `${st.landlock} (ABI ${st.landlockAbi})`;
  const ll = cell('landlock', llText, st?.landlock);
  if (typeof st?.landlock === 'string') ll.classList.add(st.landlock === 'on' ? 'ok' : 'warn');
  tr.append(ll);

  return tr;
}

function validHealth(j) {
  return j && typeof j === 'object' && Array.isArray(j.daemons) &&
    j.daemons.every((d) => d && typeof d === 'object' && typeof d.name === 'string');
}

function setStatus(kind, text) {
  const s = $('health-status');
  s.dataset.status = kind;
  s.textContent = text;
}

function setNotice(nodes) {
  const n = $('health-notice');
  if (!nodes) {
    n.hidden = true;
    n.replaceChildren();
    return;
  }
  n.replaceChildren(...nodes);
  n.hidden = false;
}

function renderHealth(j) {
  const rows = j.daemons.map(daemonRow);
  $('health-rows').replaceChildren(...rows);
  $('health-table').classList.remove('stale');
  $('version').textContent = fmt(typeof j.version === 'string' ? j.version : null);

  const total = j.daemons.length;
  const down = j.daemons.filter((d) => d.up !== true).length;
  if (j.ok === true && down === 0)
    setStatus('ok', `OK — all ${total} daemons up`);
  else if (down > 0)
    setStatus('degraded', `Degraded — ${down} of ${total} daemons down`);
  else
    setStatus('degraded', 'Degraded');
  setNotice(null);
  renderAgentSandbox(j.daemons.find((d) => d.name === 'spawner'));
  renderSandboxHost(j.daemons.find((d) => d.name === 'spawner'));
  stampUpdated();
}

// "Updated <time>".  A page's first locale-aware time format loads ICU's
// data (15-20 ms in a fresh Chromium page): the first stamp is written
// after the frame that shows the rows, the later ones at once.  Either
// way the text is the time of the newest answer.
let updatedAt = null;
let updatedWarm = false;

function writeUpdated() {
  $('health-updated').textContent = updatedAt.toLocaleTimeString();
}

function stampUpdated() {
  updatedAt = new Date();
  if (updatedWarm) {
    writeUpdated();
    return;
  }
  updatedWarm = true;
  requestAnimationFrame(() => setTimeout(writeUpdated, 0));
}

// SBX-5: say which layers agents run under, as the spawner reports it.
function renderAgentSandbox(spawner) {
  const n = $('agent-sandbox');
  const layers = spawner?.status?.agentSandbox;
  if (layers !== 'none') {
    n.hidden = true;
    n.replaceChildren();
    return;
  }
  n.textContent = 'Agents run without a per-run sandbox in this build: ' +
    'they have your file access, limited only by the spawner\'s seccomp ' +
    'denylist and resource limits. Agents whose manifest asks for a ' +
    'sandbox are disabled until it exists.';
  n.hidden = false;
}

// SBX-1..5: which layers this host offers agent runs, as the spawner
// probed them (Landlock ABI, user namespaces, seccomp, the dir of the
// runs' private tmps: without it no agent runs).
function renderSandboxHost(spawner) {
  const n = $('sandbox-host');
  const sh = spawner?.up === true ? spawner.status?.sandboxHost : null;
  if (!sh || typeof sh !== 'object') {
    n.hidden = true;
    n.replaceChildren();
    return;
  }
  const abi = isInt(sh.landlockAbi) ? sh.landlockAbi : null;
  const yn = (v) => (v === true ? 'yes' : v === false ? 'no' : DASH);
  const part = (k, v, raw) => {
    const s = el('strong', null, v);
    s.dataset.layer = k;
    if (raw !== undefined && raw !== null) s.dataset.value = String(raw);
    return s;
  };
  n.replaceChildren(
    'Sandbox layers this host offers agent runs: Landlock ',
    part('landlock', abi === null ? DASH : abi > 0 ? `ABI ${abi}` : 'unavailable', abi),
    ', user namespaces ', part('userns', yn(sh.userns), sh.userns),
    ', seccomp ', part('seccomp', yn(sh.seccomp), sh.seccomp),
    ', private tmp ', part('privatetmp', yn(sh.privateTmp), sh.privateTmp), '.');
  if (sh.privateTmp === false) n.querySelector('[data-layer="privatetmp"]').classList.add('warn');
  // SP-7: what bounds the number of a run's processes.
  const pc = spawner.status?.pidsCgroup;
  if (pc && typeof pc === 'object' && typeof pc.state === 'string') {
    const s = part('pids', pc.state, pc.on === true);
    if (pc.required === true && pc.on !== true) s.classList.add('warn');
    n.append(' Process bound: ', s, '.');
  }
  n.hidden = false;
}

// One row per agent: the layers its runs get (from /api/agents).
function sandboxRow(a) {
  const sb = a.sandbox;
  const tr = el('tr', sb.enforced === true ? 'is-up' : 'is-weak');
  tr.dataset.agent = a.name;
  const th = el('th', 'name', a.name);
  th.scope = 'row';
  tr.append(th);
  tr.append(cell('isolation', fmt(sb.isolation), sb.isolation));
  const net = cell('network', fmt(sb.network), sb.network);
  if (sb.network === 'none') net.classList.add('ok');
  tr.append(net);
  const layers = Array.isArray(sb.layers) ? sb.layers.filter((l) => typeof l === 'string') : [];
  const lc = cell('layers', layers.length ? null : 'none', layers.join(' '));
  for (const l of layers) lc.append(el('span', 'layer', l));
  tr.append(lc);
  const enforced = sb.enforced === true;
  const en = cell('enforced', enforced ? 'yes' : 'no', enforced);
  en.classList.add(enforced ? 'ok' : 'warn');
  if (!enforced && typeof sb.reason === 'string' && sb.reason)
    en.append(el('span', 'sandbox-reason', sb.reason));
  tr.append(en);
  return tr;
}

function renderSandboxes(agents) {
  const list = Array.isArray(agents) ?
    agents.filter((a) => a && typeof a.name === 'string' && a.sandbox && typeof a.sandbox === 'object') : [];
  $('sandbox-rows').replaceChildren(...list.map(sandboxRow));
  $('sandbox-wrap').hidden = list.length === 0;
  renderAgentsSummary(agents);
}

// The summary's agent count, and each agent that is not live with why.
function renderAgentsSummary(agents) {
  const off = $('health-offline');
  if (!Array.isArray(agents)) {
    $('health-agents').textContent = DASH;
    off.replaceChildren();
    off.hidden = true;
    return;
  }
  const list = agents.filter((a) => a && typeof a.name === 'string');
  const down = list.filter((a) => a.readiness && typeof a.readiness === 'object' &&
    a.readiness.probed !== false && a.readiness.status !== 'live');
  const n = list.length;
  $('health-agents').textContent = `${n} agent${n === 1 ? '' : 's'}` +
    (down.length ? `, ${down.length} not live` : '');
  $('health-agents').dataset.down = String(down.length);
  off.replaceChildren(...down.map((a) => {
    const li = h('li', 'not-live', el('strong', null, a.name),
      ` ${typeof a.readiness.status === 'string' ? a.readiness.status : 'unknown'}: ` +
      `${notLive(a.readiness) || 'no reason given'}.`);
    li.dataset.agent = a.name;
    return li;
  }));
  off.hidden = down.length === 0;
}

function renderSignedOut() {
  $('health-rows').replaceChildren();
  renderAgentSandbox(undefined);
  renderSandboxHost(undefined);
  renderSandboxes(null);
  $('version').textContent = DASH;
  setStatus('signed-out', 'Not signed in');
  setNotice([
    document.createTextNode('Not signed in — run '),
    el('code', null, 'cordon login'),
    document.createTextNode(' on this machine and open the URL it prints.'),
  ]);
}

function renderError(text) {
  // Keep the last table, but mark it stale so nobody mistakes it for live.
  $('health-table').classList.add('stale');
  setStatus('error', 'Unreachable');
  setNotice([document.createTextNode(text)]);
}

async function fetchHealth(signal) {
  const res = await getJSON('/api/health', signal);
  if (res.kind === 'aborted') return res;
  if (res.kind === 'signed-out') return { kind: 'signed-out' };
  // A degraded cordon answers ok:false with the same daemon list.
  const j = res.data;
  if ((res.kind === 'ok' || res.kind === 'refused') && validHealth(j))
    return { kind: 'ok', data: j };
  if (res.kind === 'error' && res.status === 0)
    return { kind: 'error', text: 'Cannot reach cordon. Retrying…' };
  if (res.status && res.status !== 200)
    return { kind: 'error', text: `cordon answered HTTP ${res.status}. Retrying…` };
  return { kind: 'error', text: 'cordon sent an unexpected answer. Retrying…' };
}

export const health = {
  timer: null,
  ctrl: null,
  gen: 0,
  agentsTimer: null,
  agentsCtrl: null,
  agentsGen: 0,
  agentsOff: false, // the build has no /api/agents

  start() {
    if (this.ctrl || this.timer) return;
    this.tick();
  },

  stop() {
    this.gen++;
    clearTimeout(this.timer);
    this.timer = null;
    if (this.ctrl) this.ctrl.abort();
    this.ctrl = null;
    this.agentsGen++;
    clearTimeout(this.agentsTimer);
    this.agentsTimer = null;
    this.agentsCtrl?.abort();
    this.agentsCtrl = null;
  },

  // Per-agent sandbox layers, on a slower period than the daemons.
  // Started by a signed-in daemons answer; stops itself while signed out
  // or when the route does not exist (the next daemons answer restarts it).
  async agentsTick(gen) {
    this.agentsTimer = null;
    const ctrl = new AbortController();
    this.agentsCtrl = ctrl;
    const res = await getJSON('/api/agents', ctrl.signal);
    if (gen !== this.agentsGen || res.kind === 'aborted') return;
    this.agentsCtrl = null;
    renderSandboxes(res.kind === 'ok' ? res.data.agents : null);
    if (res.kind === 'unavailable') {
      this.agentsOff = true;
      return;
    }
    if (res.kind === 'signed-out') return;
    this.agentsTimer = setTimeout(() => this.agentsTick(gen), AGENTS_POLL_MS);
  },

  async tick() {
    this.timer = null;
    const gen = ++this.gen;
    const ctrl = new AbortController();
    this.ctrl = ctrl;
    const res = await fetchHealth(ctrl.signal);
    // A stop() or a newer tick since we started: drop this answer.
    if (gen !== this.gen) return;
    this.ctrl = null;
    if (res.kind === 'ok') {
      renderHealth(res.data);
      if (!this.agentsOff && !this.agentsTimer && !this.agentsCtrl) this.agentsTick(this.agentsGen);
    }
    else if (res.kind === 'signed-out') renderSignedOut();
    else renderError(res.text);
    this.timer = setTimeout(() => this.tick(), pollDelay(POLL_MS));
  },
};

