// cordon dashboard (DA-1, DA-3): plain ES modules, no framework, no CDN.
// This file routes between the views by the URL hash, holds Stop all and
// the signed-out banner.  Runs under the PER-6 CSP: DOM built with
// createElement/textContent only; no inline styles, no string evaluation.

import { auth, onAuth, onRuns, runCount, stopAll } from './api.js';
import { $ } from './dom.js';
import { health } from './health.js';
import { agentsView, agentView } from './agents.js';
import { vaultView } from './vault.js';
import { activityView } from './activity.js';
import { approvalsView, startApprovals } from './approvals.js';
import { missionsView } from './missions.js';

const DEFAULT_VIEW = 'health';

const healthView = {
  title: 'Health',
  mount() { health.start(); },
  unmount() { health.stop(); },
};

const VIEWS = {
  agents: agentsView,
  agent: agentView,
  vault: vaultView,
  missions: missionsView,
  activity: activityView,
  approvals: approvalsView,
  health: healthView,
};
const NAV_OF = { agent: 'agents' };

// "#name" or "#name/param…" (the param stays URL-decoded per segment).
function route() {
  const raw = location.hash.replace(/^#\/?/, '');
  const slash = raw.indexOf('/');
  const name = slash === -1 ? raw : raw.slice(0, slash);
  if (!Object.hasOwn(VIEWS, name)) return { name: DEFAULT_VIEW, param: '' };
  let param = slash === -1 ? '' : raw.slice(slash + 1);
  try {
    param = param.split('/').map(decodeURIComponent).join('/');
  } catch {
    param = '';
  }
  return { name, param };
}

let current = null; // {name, param, view}

function show() {
  const { name, param } = route();
  if (current && current.name === name && current.param === param) return;
  // Same view, another note: let the view move without a remount.
  if (current && current.name === name && current.view.update) {
    current.param = param;
    current.view.update(param);
    return;
  }
  if (current) current.view.unmount();
  const view = VIEWS[name];
  current = { name, param, view };
  const nav = NAV_OF[name] || name;
  for (const a of document.querySelectorAll('#nav a[data-view]')) {
    if (a.dataset.view === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const isHealth = name === 'health';
  $('view-health').hidden = !isHealth;
  $('view-unavailable').hidden = true;
  const dyn = $('view-dynamic');
  dyn.hidden = isHealth;
  dyn.dataset.view = name;
  delete dyn.dataset.state;
  if (!isHealth) dyn.replaceChildren();
  document.title = `${view.title} · cordon`;
  banner();
  view.mount(dyn, param);
}

function banner() {
  // The Health view says "Not signed in" itself.
  $('signed-out').hidden = !auth.signedOut || (current && current.name === 'health');
}

function stopAllSync(n) {
  const b = $('stop-all');
  b.disabled = n === 0;
  b.textContent = n ? `Stop all (${n})` : 'Stop all';
  b.dataset.running = String(n);
}

$('stop-all').addEventListener('click', async () => {
  const n = await stopAll();
  const s = $('stop-all-status');
  s.textContent = n ? `Asked cordon to stop ${n} run${n === 1 ? '' : 's'}.` : 'No run to stop.';
  clearTimeout(stopAllNote);
  stopAllNote = setTimeout(() => { s.textContent = ''; }, 5000);
});
let stopAllNote = null;

startApprovals();
onRuns(stopAllSync);
onAuth(banner);
stopAllSync(runCount());
window.addEventListener('hashchange', show);
document.addEventListener('visibilitychange', () => {
  // Catch up at once when the tab comes back instead of waiting a period.
  if (!document.hidden && current && current.name === 'health' && health.timer) {
    health.stop();
    health.start();
  }
});
show();
