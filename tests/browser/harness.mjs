// Browser-test harness for the cordon dashboard.
//
// - startCordon(): runs `cordon run --home <fresh tmp> --port 0 --allow-root`
//   from $CORDON_BUILD (default /work/main/build), waits (bounded) for the
//   "cordon: dashboard http://127.0.0.1:PORT/ui/login?code=CODE" line.
//   stop() sends SIGTERM and resolves with the exit status.
// - launchBrowser(): Debian's headless Chromium through playwright-core,
//   with a fresh profile (playwright makes a new temporary user-data-dir for
//   every launch and removes it on close).
// - watch(context): collects console errors, page errors and CSP violations
//   (a securitypolicyviolation listener installed with addInitScript, plus
//   console messages that mention Content Security Policy).
//
// Everything talks to 127.0.0.1 only. Any cordon still running when node
// exits (a failed or timed-out test) is killed with its process group.

import { spawn, execFileSync } from 'node:child_process';
import {
  mkdtempSync, rmSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const OUT_DIR = path.join(HERE, 'out');
export const BUILD = process.env.CORDON_BUILD || '/work/main/build';
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const LOGIN_RE =
  /^cordon: dashboard (http:\/\/127\.0\.0\.1:(\d+)\/ui\/login\?code=([0-9a-f]{32}))\s*$/m;

// ---- process hygiene --------------------------------------------------------

const live = new Set(); // cordon supervisors we started (each leads its own process group)

// Direct children of `pid` as [{pid, comm}], from /proc. cordon's daemons
// run in their own sessions, so the supervisor's process group does not
// cover them.
export function childrenOf(pid) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = st.slice(st.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) === pid)
        out.push({ pid: Number(d), comm: st.slice(st.indexOf('(') + 1, st.lastIndexOf(')')) });
    } catch { /* raced with exit */ }
  }
  return out;
}

// Every process beneath pid (a run's agent is the child of its init).
export function descendantsOf(pid) {
  const out = [];
  for (let todo = [pid]; todo.length;) {
    const kids = childrenOf(todo.pop());
    out.push(...kids);
    todo.push(...kids.map((k) => k.pid));
  }
  return out;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Emergency stop (synchronous): the supervisor's group and its daemons.
function killAll(child, sig) {
  const kids = childrenOf(child.pid);
  try {
    process.kill(-child.pid, sig);
  } catch {
    try { child.kill(sig); } catch { /* gone */ }
  }
  for (const k of kids) {
    try { process.kill(k.pid, sig); } catch { /* gone */ }
  }
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

process.on('exit', () => {
  for (const c of live) killAll(c, 'SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    for (const c of live) killAll(c, 'SIGKILL');
    process.exit(130);
  });
}

export function withTimeout(promise, ms, what) {
  let t;
  const timer = new Promise((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timer]).finally(() => clearTimeout(t));
}

// ---- cordon -----------------------------------------------------------------

export function cordonVersion() {
  const out = execFileSync(path.join(BUILD, 'cordon'), ['version'], {
    encoding: 'utf8',
    timeout: 5000,
  });
  // `cordon version` adds the commit and build type; the dashboard shows
  // the version alone.
  return out.trim().replace(/^cordon\s+/, '').split(/\s/)[0];
}

// demo: `cordon run --demo` (demo vault and agent); files: {relative path:
// text} written into the fresh home before cordon starts (extra manifests,
// vault notes).  Paths must stay inside the home.
export async function startCordon({ readyTimeoutMs = 15000, demo = false, files = {} } = {}) {
  const bin = path.join(BUILD, 'cordon');
  const missing = ['cordon', 'cordon-auditd', 'cordon-vaultd', 'cordon-spawner', 'cordon-broker', 'cordon-egressd', 'cordon-sched', 'cordon-gated']
    .filter((b) => !existsSync(path.join(BUILD, b)));
  if (missing.length)
    throw new Error(`missing in ${BUILD}: ${missing.join(', ')} (build them, or set CORDON_BUILD)`);
  const home = mkdtempSync(path.join(tmpdir(), 'cordon-browser-home-'));
  for (const [rel, text] of Object.entries(files)) {
    const p = path.resolve(home, rel);
    if (!p.startsWith(home + path.sep)) throw new Error(`startCordon: ${rel} leaves the home`);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, text, { mode: 0o644 });
  }
  const args = ['run', '--home', home, '--port', '0', '--allow-root'];
  if (demo) args.push('--demo');
  const child = spawn(bin, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // own process group, so a failure can take down every daemon
    env: { ...process.env, NO_COLOR: '1' },
  });
  live.add(child);

  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => { stderr += d; });

  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = LOGIN_RE.exec(stdout);
      if (m) resolve({ loginUrl: m[1], port: Number(m[2]), code: m[3] });
    });
    child.once('error', reject);
    exited.then(({ code, signal }) =>
      reject(new Error(`cordon exited before ready (code ${code}, signal ${signal})`)));
  });

  let info;
  try {
    info = await withTimeout(ready, readyTimeoutMs, 'waiting for the cordon login URL');
  } catch (e) {
    killAll(child, 'SIGKILL');
    live.delete(child);
    rmSync(home, { recursive: true, force: true });
    e.message += `\n--- cordon stdout ---\n${stdout}\n--- cordon stderr ---\n${stderr}`;
    throw e;
  }

  const base = `http://127.0.0.1:${info.port}`;
  return {
    ...info,
    base,
    home,
    pid: child.pid,
    output: () => ({ stdout, stderr }),
    // The daemons the supervisor runs now, by name: {auditd: pid, ...}.
    daemonPids() {
      return Object.fromEntries(childrenOf(child.pid)
        .filter((k) => k.comm.startsWith('cordon-'))
        .map((k) => [k.comm.slice('cordon-'.length), k.pid]));
    },
    // SIGTERM, then wait (bounded) for the supervisor to stop its daemons.
    // Resolves {code, signal, leftovers: [pids still alive]}.
    async stop({ timeoutMs = 10000 } = {}) {
      const kids = childrenOf(child.pid).map((k) => k.pid);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      let status;
      try {
        status = await withTimeout(exited, timeoutMs, 'waiting for cordon to exit');
      } catch (e) {
        killAll(child, 'SIGKILL');
        for (const k of kids) try { process.kill(k, 'SIGKILL'); } catch { /* gone */ }
        throw e;
      } finally {
        live.delete(child);
        rmSync(home, { recursive: true, force: true });
      }
      // Every daemon should be gone with the supervisor; give them a moment.
      const left = () => kids.filter(alive).concat(groupAlive(child.pid) ? [-child.pid] : []);
      const deadline = Date.now() + 3000;
      while (left().length && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      status.leftovers = left();
      for (const k of status.leftovers) try { process.kill(k, 'SIGKILL'); } catch { /* gone */ }
      return status;
    },
    // For after() hooks when a test failed half-way: a graceful stop, then
    // SIGKILL for whatever is left. Never throws.
    async kill() {
      if (!live.has(child)) return;
      try {
        await this.stop({ timeoutMs: 8000 });
      } catch {
        /* stop() already used SIGKILL */
      }
    },
  };
}

// ---- chromium ---------------------------------------------------------------

export async function launchBrowser() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} missing: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 20000,
  });
}

// Runs in every document before its own scripts (CDP bypasses the page CSP).
function cspInitScript() {
  const seen = [];
  Object.defineProperty(window, '__cspViolations', { value: seen });
  document.addEventListener('securitypolicyviolation', (e) => {
    const v = {
      directive: e.effectiveDirective || e.violatedDirective,
      blocked: e.blockedURI,
      source: e.sourceFile,
      line: e.lineNumber,
      sample: e.sample,
      disposition: e.disposition,
    };
    seen.push(v);
    try { window.__cordonCsp?.(v); } catch { /* binding not ready */ }
  });
}

function isApiUrl(u) {
  try {
    return new URL(u).pathname.startsWith('/api/');
  } catch {
    return false;
  }
}

// Every console error attributed to a 501 came from a URL that really
// answered 501 {"ok":false,"error":"not-implemented"}.  Returns the count.
export async function checkUnavailable(w) {
  for (const u of w.unavailable) {
    const body = await w.responses501.get(u);
    if (body === undefined) throw new Error(`console 501 not seen on the wire: ${u}`);
    if (body !== null && body !== '{"ok":false,"error":"not-implemented"}')
      throw new Error(`501 with an unexpected body at ${u}: ${body}`);
  }
  return w.unavailable.length;
}

// Collect problems from every page of a context. `allow` may list predicates
// (msg) => bool for console errors a test expects (e.g. a deliberate 401).
//
// Chromium logs a console error for every fetch answered 4xx/5xx.  A route
// this build has not implemented yet answers 501 "not-implemented"; those
// errors are attributed (w.unavailable: the URLs) rather than counted, and
// w.responses501 keeps every 501 answer seen so checkUnavailable() can
// prove each attributed error was such an answer.
export async function watch(context, { allow = [] } = {}) {
  const w = {
    csp: [], consoleErrors: [], pageErrors: [], allowed: [], failedRequests: [],
    unavailable: [], responses501: new Map(),
  };
  await context.exposeBinding('__cordonCsp', ({ page }, v) => {
    w.csp.push({ page: page?.url(), ...v });
  });
  await context.addInitScript(cspInitScript);
  const hook = (page) => {
    page.on('console', (msg) => {
      const text = msg.text();
      const where = msg.location()?.url || page.url();
      if (/Content[- ]Security[- ]Policy/i.test(text)) {
        w.csp.push({ page: where, console: text });
        return;
      }
      if (msg.type() !== 'error') return;
      if (/status of 501 \(Not Implemented\)/.test(text) && isApiUrl(where)) {
        w.unavailable.push(where);
        return;
      }
      if (allow.some((f) => f(msg))) {
        w.allowed.push(text);
        return;
      }
      w.consoleErrors.push(`${text} @ ${where}`);
    });
    page.on('pageerror', (err) => w.pageErrors.push(String(err?.stack || err)));
    page.on('response', (r) => {
      if (r.status() !== 501 || !isApiUrl(r.url())) return;
      w.responses501.set(r.url(), r.text().catch(() => null));
    });
    page.on('requestfailed', (req) => {
      const f = req.failure()?.errorText || 'failed';
      if (f !== 'net::ERR_ABORTED') w.failedRequests.push(`${req.method()} ${req.url()}: ${f}`);
    });
  };
  for (const p of context.pages()) hook(p);
  context.on('page', hook);
  return w;
}

// What went over the wire for requests to `url` from `page`, via CDP: the
// real status even when CORS/CORP hides the response from the page (and from
// playwright's response event), and the real request headers.
export async function wireLog(context, page, url) {
  const cdp = await context.newCDPSession(page);
  const byId = new Map();
  const log = [];
  const entry = (id) => {
    let e = byId.get(id);
    if (!e) {
      e = { url: null, status: null, origin: null, cookie: false, secFetchSite: null, error: null };
      byId.set(id, e);
    }
    return e;
  };
  cdp.on('Network.requestWillBeSent', (ev) => {
    if (ev.request.url !== url) return;
    const e = entry(ev.requestId);
    e.url = ev.request.url;
    log.push(e);
  });
  cdp.on('Network.requestWillBeSentExtraInfo', (ev) => {
    const h = Object.fromEntries(Object.entries(ev.headers || {})
      .map(([k, v]) => [k.toLowerCase(), v]));
    const e = entry(ev.requestId);
    e.origin = h.origin ?? null;
    e.secFetchSite = h['sec-fetch-site'] ?? null;
    e.cookie = /(^|;\s*)cordon_session=/.test(h.cookie ?? '');
  });
  cdp.on('Network.responseReceivedExtraInfo', (ev) => { entry(ev.requestId).status = ev.statusCode; });
  cdp.on('Network.loadingFailed', (ev) => {
    const e = entry(ev.requestId);
    e.error = ev.blockedReason || ev.corsErrorStatus?.corsError || ev.errorText;
  });
  await cdp.send('Network.enable');
  // Only entries that were really requests to `url`.
  return { entries: () => log.filter((e) => e.url === url), detach: () => cdp.detach().catch(() => {}) };
}

// PER-5: the header a signed-in dashboard page adds to a request of its
// own: the page key api.js keeps in the origin's localStorage.
export async function pageKeyHeaders(page) {
  const key = await page.evaluate(() => localStorage.getItem('cordon.pageKey'));
  return key ? { 'X-Cordon-Page': key } : {};
}

export function outPath(name) {
  mkdirSync(OUT_DIR, { recursive: true });
  return path.join(OUT_DIR, name);
}

// Table rows as plain data: text and data-value of each cell.
export async function healthRows(page) {
  return page.$$eval('#health-rows tr', (trs) =>
    trs.map((tr) => {
      const c = (sel) => {
        const e = tr.querySelector(sel);
        return e ? { text: e.textContent.trim(), value: e.dataset.value ?? null } : null;
      };
      return {
        daemon: tr.dataset.daemon,
        name: c('.name')?.text,
        state: c('.state'),
        pid: c('.pid'),
        restarts: c('.restarts'),
        uid: c('.uid'),
        caps: c('.caps'),
        nnp: c('.nnp'),
        seccomp: c('.seccomp'),
        landlock: c('.landlock'),
      };
    }));
}
