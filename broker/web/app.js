// cordon dashboard (DA-1, DA-3): plain ES modules, no framework, no CDN.
// This file routes between the views by the URL hash, holds Stop all and
// the signed-out banner.  Runs under the PER-6 CSP: DOM built with
// createElement/textContent only; no inline styles, no string evaluation.
//
// The first view is Agents; its modules and Health's are preloaded by
// index.html beside this file: every other view's module is imported when
// it is first shown, and all of them right after the first view's data
// has come, so the first view waits for no module it does not use and a
// later click waits for none (bench/bench_ui.mjs).

// api.js first: it takes the page key out of the address bar (PER-5).
import { auth, onAuth, onRuns, runCount, stopAll } from './api.js';
import { $, errorPanel } from './dom.js';
import { health } from './health.js';

const DEFAULT_VIEW = 'agents';

const healthView = {
  title: 'Health',
  mount() { health.start(); },
  unmount() { health.stop(); },
};

// name -> () => Promise of the view (import() is not string evaluation:
// 'self' scripts only, as PER-6 wants).
const VIEWS = {
  agents: () => import('./agents.js').then((m) => m.agentsView),
  agent: () => import('./agents.js').then((m) => m.agentView),
  vault: () => import('./vault.js').then((m) => m.vaultView),
  missions: () => import('./missions.js').then((m) => m.missionsView),
  jobs: () => import('./jobs.js').then((m) => m.jobsView),
  activity: () => import('./activity.js').then((m) => m.activityView),
  approvals: () => import('./approvals.js').then((m) => m.approvalsView),
  health: () => Promise.resolve(healthView),
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
let showing = 0; // the newest show(): an older one whose module came late yields

// A view whose module cannot load (the fetch failed: a browser keeps that
// failure for the document's life, so only a reload retries).
function brokenView() {
  return {
    title: 'Error',
    mount(root) {
      root.dataset.state = 'error';
      root.append(errorPanel('This view could not be loaded from cordon. Reload the page.'));
    },
    unmount() {},
  };
}

async function show() {
  const { name, param } = route();
  if (current && current.name === name && current.param === param) return;
  // Same view, another note: let the view move without a remount.
  if (current && current.name === name && current.view.update) {
    current.param = param;
    current.view.update(param);
    return;
  }
  const seq = ++showing;
  let view;
  try {
    view = await VIEWS[name]();
  } catch {
    view = brokenView();
  }
  if (seq !== showing) return;
  if (current) current.view.unmount();
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
  s.textContent = (n ? `Asked cordon to stop ${n} run${n === 1 ? '' : 's'}.` : 'No run to stop.') +
    ' Detached jobs go on: cancel them from the Jobs view.';
  clearTimeout(stopAllNote);
  stopAllNote = setTimeout(() => { s.textContent = ''; }, 5000);
});
let stopAllNote = null;

// The approvals watcher (banner and nav count on every page) and the
// other views' modules, once the first API answer is on screen: an answer
// calls the auth listeners just before its view renders it, and the timer
// set in the next animation frame runs after that frame is painted.  A
// page that gets no answer, or is in the background (no frames), starts
// them after a while all the same.
let rest = false;
function loadRest() {
  if (rest) return;
  rest = true;
  import('./approvals.js').then((m) => m.startApprovals(), () => {});
  for (const n of Object.keys(VIEWS)) VIEWS[n]().catch(() => {});
}
onAuth(() => requestAnimationFrame(() => setTimeout(loadRest, 0)));
setTimeout(loadRest, 1500);

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
