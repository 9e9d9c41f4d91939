// cordon dashboard: the one way the page talks to /api (API-1 ... API-8).
// Classifies every answer (ok, signed-out, unavailable, refused, error),
// keeps the page key (PER-5) and the signed-in state with a polling
// back-off, reads NDJSON streams, and holds the registry of running runs
// that Stop all cancels.

const TIMEOUT_MS = 8000;
const BACKOFF_MIN_MS = 2000;
const BACKOFF_MAX_MS = 60000;

// PER-5: the login lands on /ui/#page=KEY; the key leaves the address bar
// before other modules run, and replaces the stored one (localStorage,
// tabs share it) only once the API takes it: a link to #page=garbage
// signs no one out.
const KEY = 'cordon.pageKey';
const KEY_RE = /^[0-9a-f]{64}$/;
const pageKey = () => {
  try {
    const k = localStorage.getItem(KEY);
    return KEY_RE.test(k) ? k : null;
  } catch {
    return null;
  }
};
let trial = null; // the fragment's key, not yet taken by the API
const loc = globalThis.location; // none under node
if (loc?.hash.startsWith('#page=')) {
  const k = loc.hash.slice(6);
  history.replaceState(history.state, '', loc.pathname + loc.search);
  if (KEY_RE.test(k)) trial = k;
}

// ---- signed-in state ----

const authListeners = new Set();
export const auth = {
  signedOut: false,
  known: false, // an API answer has said which (listeners hear the first)
  backoff: BACKOFF_MIN_MS,
};

function setSignedOut(v) {
  if (v) auth.backoff = auth.signedOut ?
    Math.min(auth.backoff * 2, BACKOFF_MAX_MS) : BACKOFF_MIN_MS;
  else auth.backoff = BACKOFF_MIN_MS;
  if (auth.signedOut === v && auth.known) return;
  auth.known = true;
  auth.signedOut = v;
  for (const f of authListeners) f(v);
}

export function onAuth(f) {
  authListeners.add(f);
}

// The delay before a poller's next tick: its own period while signed in,
// a doubling back-off (up to a minute) while the API answers 401.
export function pollDelay(periodMs) {
  return auth.signedOut ? Math.max(periodMs, auth.backoff) : periodMs;
}

// A poller stopped: its next tick (view.timer) cancelled, its request in
// flight (view.ctrl) aborted.
export function stopPoll(view) {
  clearTimeout(view.timer);
  view.timer = null;
  view.ctrl?.abort();
}

// ---- requests ----

// 501: the handler is not written yet.  A route this build does not have
// at all answers 404 "not-found"; only callers asking for a route that may
// not exist yet (missing) read that as "not available" too, since a vault
// note that is not there answers 404 as well.
function unavailable(status, code, missing) {
  return status === 501 || (missing && status === 404 && code === 'not-found');
}

async function classify(r, missing = false) {
  let j = null;
  try {
    j = await r.json();
  } catch {
    j = null;
  }
  if (r.status === 401) {
    setSignedOut(true);
    return { kind: 'signed-out', status: 401 };
  }
  setSignedOut(false);
  const code = j && typeof j.error === 'string' ? j.error : null;
  if (unavailable(r.status, code, missing))
    return { kind: 'unavailable', status: r.status };
  if (r.ok && j && typeof j === 'object' && j.ok === true)
    return { kind: 'ok', status: r.status, data: j };
  if (j && typeof j === 'object' && j.ok === false)
    return { kind: 'refused', status: r.status, code, data: j };
  return { kind: 'error', status: r.status, code: null };
}

function timed(signal, ms) {
  const ctrl = new AbortController();
  const t = setTimeout(() => ctrl.abort(), ms);
  if (signal) {
    if (signal.aborted) ctrl.abort();
    else signal.addEventListener('abort', () => ctrl.abort(), { once: true });
  }
  return { signal: ctrl.signal, done: () => clearTimeout(t) };
}

function opts(method, signal, body) {
  const o = {
    method,
    credentials: 'same-origin',
    cache: 'no-store',
    headers: { Accept: 'application/json' },
    signal,
  };
  if (body !== undefined) {
    // PER-8 wants the JSON type; PER-7's Referer comes with the page.
    o.headers['Content-Type'] = 'application/json';
    o.body = JSON.stringify(body);
  }
  return o;
}

// fetch with the page key (none: 401, signed out).  A key on trial goes
// first: a 2xx adopts it, a 401 drops it and the stored key asks again.
async function send(url, o) {
  const k = trial || pageKey();
  if (k) o.headers['X-Cordon-Page'] = k;
  const r = await fetch(url, o);
  if (r.ok && trial && k === trial) {
    try {
      localStorage.setItem(KEY, k);
      trial = null;
    } catch {
      // no storage: the page alone holds it
    }
  }
  if (r.status !== 401) return r;
  if (k === trial) trial = null;
  const s = pageKey();
  return s && s !== k ? send(url, o) : r;
}

async function call(method, url, body, signal, ms, missing = false) {
  const t = timed(signal, ms);
  try {
    const r = await send(url, opts(method, t.signal, body));
    return await classify(r, missing);
  } catch (e) {
    if (signal && signal.aborted) return { kind: 'aborted' };
    return { kind: 'error', status: 0, code: null };
  } finally {
    t.done();
  }
}

export function getJSON(url, signal, { missing = false } = {}) {
  return call('GET', url, undefined, signal, TIMEOUT_MS, missing);
}

// Actions may run for up to 60 s (SP-8); allow for that plus the grace.
export function postJSON(url, body, signal, ms = TIMEOUT_MS) {
  return call('POST', url, body === undefined ? {} : body, signal, ms);
}

// A path segment for a route parameter.
export function seg(s) {
  return encodeURIComponent(String(s));
}

// ---- NDJSON stream (API-3) ----

// POST and read one JSON object per line as the bytes come, lines split
// across chunk boundaries included.  Calls onEvent(obj) per line; resolves
// {kind:'ended'} at the end of the stream, or what classify() says when
// the answer is not a stream.
export async function streamNDJSON(url, body, signal, onEvent) {
  let r;
  try {
    r = await send(url, opts('POST', signal, body));
  } catch {
    if (signal && signal.aborted) return { kind: 'aborted' };
    return { kind: 'error', status: 0, code: null };
  }
  const type = r.headers.get('Content-Type') || '';
  if (!r.ok || !type.startsWith('application/x-ndjson'))
    return classify(r);
  setSignedOut(false);
  const reader = r.body.getReader();
  const dec = new TextDecoder('utf-8');
  let buf = '';
  const line = (s) => {
    if (s.trim() === '') return;
    let o;
    try {
      o = JSON.parse(s);
    } catch {
      return; // not ours to show
    }
    if (o && typeof o === 'object' && typeof o.kind === 'string') onEvent(o);
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) !== -1) {
        line(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    }
    buf += dec.decode();
    line(buf);
  } catch {
    if (signal && signal.aborted) return { kind: 'aborted' };
    return { kind: 'error', status: 0, code: null };
  }
  return { kind: 'ended' };
}

// ---- running runs (Stop all) ----

// runKey -> {agent, runId|null, stop()}; stop() cancels on the server when
// the runId is known and aborts the stream either way.
const runs = new Map();
const runListeners = new Set();
let runSeq = 0;

function runsChanged() {
  for (const f of runListeners) f(runs.size);
}

export function onRuns(f) {
  runListeners.add(f);
}

export function runAdd(agent, stop) {
  const key = ++runSeq;
  runs.set(key, { agent, runId: null, stop });
  runsChanged();
  return key;
}

export function runSetId(key, runId) {
  const r = runs.get(key);
  if (r) r.runId = runId;
}

export function runDone(key) {
  if (runs.delete(key)) runsChanged();
}

export function runCount() {
  return runs.size;
}

// API-4: ask the server to cancel; 404 unknown-run means it already ended.
export async function cancelRun(runId) {
  const res = await postJSON(`/api/runs/${seg(runId)}/cancel`, {});
  return res.kind === 'ok' || (res.kind === 'refused' && res.code === 'unknown-run');
}

export async function stopAll() {
  const all = [...runs.values()];
  await Promise.all(all.map((r) => r.stop()));
  return all.length;
}
