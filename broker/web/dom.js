// cordon dashboard: the only DOM helpers.  Everything the page shows is
// built here with createElement and textContent (PER-6 CSP: no innerHTML,
// no inline style, no handler attributes, no string evaluation).

export const DASH = '—';

export const $ = (id) => document.getElementById(id);

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

// el() with children appended (strings become text nodes).
export function h(tag, cls, ...kids) {
  const e = el(tag, cls);
  for (const k of kids) {
    if (k === null || k === undefined || k === false) continue;
    e.append(typeof k === 'string' ? document.createTextNode(k) : k);
  }
  return e;
}

export function button(label, cls, onClick) {
  const b = el('button', cls ? `btn ${cls}` : 'btn', label);
  b.type = 'button';
  if (onClick) b.addEventListener('click', onClick);
  return b;
}

export function fmt(v) {
  return v === undefined || v === null || v === '' ? DASH : String(v);
}

export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return DASH;
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function fmtBytes(n) {
  if (!Number.isFinite(n)) return DASH;
  if (n < 1024) return `${n} B`;
  return n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`;
}

export function fmtTime(ts) {
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? fmt(ts) : d.toLocaleTimeString();
}

// A small coloured label; kind is one of ok, warn, bad, muted.
// API-2 readiness.reason: why an agent is not live, in words.
export const NOT_LIVE = {
  'binary-missing': 'its program was not found',
  'probe-timeout': 'its health probe timed out',
  'probe-failed': 'its health probe could not be started',
  'probe-exit': 'its health probe failed',
  'no-version': 'its health probe printed no version',
};

export function notLive(r) {
  return r && typeof r.reason === 'string' && Object.hasOwn(NOT_LIVE, r.reason) ?
    NOT_LIVE[r.reason] : null;
}

// Long work shows its elapsed time: calls show(seconds) now and every
// second until the returned function is called.  sinceMs: how long the
// work had already run (as the server said), 0 when it starts now.
export function ticker(show, sinceMs = 0) {
  const t0 = Date.now() - sinceMs;
  const f = () => show(Math.floor((Date.now() - t0) / 1000));
  f();
  const id = setInterval(f, 1000);
  return () => clearInterval(id);
}

export function fmtElapsed(s) {
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function pill(text, kind) {
  const p = el('span', `pill pill-${kind || 'muted'}`, text);
  return p;
}

// The calm panel for an API this build does not have yet (HTTP 501, or a
// route that does not exist): the same words everywhere, never fake data.
export function unavailablePanel(what) {
  const p = el('div', 'panel unavailable');
  p.dataset.state = 'unavailable';
  p.append(el('p', null, `${what} is not available in this build yet.`));
  return p;
}

export function signedOutPanel() {
  const p = el('div', 'panel signed-out');
  p.dataset.state = 'signed-out';
  p.append(h('p', null, 'Not signed in — run ', el('code', null, 'cordon login'),
    ' on this machine and open the URL it prints.'));
  return p;
}

export function errorPanel(text) {
  const p = el('div', 'panel error');
  p.dataset.state = 'error';
  p.append(el('p', null, text));
  return p;
}

export function loadingPanel() {
  const p = el('div', 'panel loading');
  p.dataset.state = 'loading';
  p.append(el('p', null, 'Loading…'));
  return p;
}

// The panel for a classified answer that is not ok (see api.js).
export function panelFor(res, what) {
  switch (res.kind) {
  case 'unavailable':
    return unavailablePanel(what);
  case 'signed-out':
    return signedOutPanel();
  case 'refused':
    return errorPanel(`cordon refused the request (${res.code || `HTTP ${res.status}`}).`);
  default:
    return errorPanel(res.status ?
      `cordon answered HTTP ${res.status}. Retrying…` :
      'Cannot reach cordon. Retrying…');
  }
}

// A table's head: one row of column headers.
export function headRow(cols) {
  const tr = el('tr');
  for (const c of cols) {
    const th = el('th', null, c);
    th.scope = 'col';
    tr.append(th);
  }
  return h('thead', null, tr);
}

// A view: a section with a heading row and a body that views replace.
export function viewHead(title, ...extra) {
  return h('div', 'view-head', el('h2', null, title), ...extra);
}
