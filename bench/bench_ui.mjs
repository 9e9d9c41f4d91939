// bench_ui: the dashboard's first view and page weight, in the browser's
// own timing (target: first view under 200 ms on a local connection, whole
// dashboard under 150 KB uncompressed).  Never asserted in tests.
//
// Starts a real `cordon run --demo` from $CORDON_BUILD (default
// /work/main/build) and Debian's headless Chromium through the browser
// tests' harness, logs in once, then loads /ui/ N times (default 20) in a
// fresh page each time and measures, from the navigation's start, the
// moment the first view (Health: one row per daemon, from /api/health) is
// on screen.  Floor, in the same run and the same browser: a page from a
// local node:http server on 127.0.0.1 that loads one module which fetches
// a JSON document and renders one element from it, the same shape of work
// without cordon.
//
// The times are the page's own clock (performance.now(), origin at the
// navigation's start), taken inside the page by a probe installed before
// its scripts: "in DOM" when the element holding the first data appears,
// "painted" when the browser paints that element's text (Element Timing).
// "painted" is the first-view figure.  For comparison the bench also
// prints when Playwright's waitForSelector saw the element: it polls at
// growing intervals (0, 20, 50, 100, 100, 500 ms), so that column is
// quantised to its poll times and includes CDP round trips; it was the
// figure this bench printed before 2026-11-26 (bench/README.md).
//
//   node bench/bench_ui.mjs [N]
import http from 'node:http';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { launchBrowser, startCordon } from '../tests/browser/harness.mjs';

const N = Number(process.argv[2] || 20);
const HERE = path.dirname(fileURLToPath(import.meta.url));

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: q(0.5), p99: q(0.99), min: s[0] };
}

// The floor's server: /, /m.js, /d.json; no cordon code at all.
function floorServer() {
  const files = {
    '/': ['text/html', '<!doctype html><meta charset="utf-8"><title>f</title>' +
      '<div id="v"></div><script type="module" src="/m.js"></script>'],
    '/m.js': ['text/javascript', "const r = await fetch('/d.json');" +
      "const d = await r.json(); const a = document.createElement('article');" +
      "a.className = 'card'; a.textContent = d.name; document.getElementById('v').append(a);"],
    '/d.json': ['application/json', '{"name":"demo"}'],
  };
  const srv = http.createServer((req, res) => {
    const f = files[req.url];
    if (!f) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': f[0], 'Cache-Control': 'no-store' });
    res.end(f[1]);
  });
  return new Promise((ok) => srv.listen(0, '127.0.0.1', () => ok(srv)));
}

// Runs in every page before its own scripts.  The first element matching
// one of the selectors gets elementtiming (set before it is painted: a
// mutation callback runs before the next frame) and its times are kept in
// window.__firstView.
function firstViewProbe(selectors) {
  const fv = {};
  Object.defineProperty(window, '__firstView', { value: fv });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if (e.identifier === 'first-view' && fv.painted === undefined)
        fv.painted = e.renderTime || e.loadTime;
  }).observe({ type: 'element', buffered: true });
  const mo = new MutationObserver(() => {
    for (const sel of selectors) {
      const e = document.querySelector(sel);
      if (!e) continue;
      fv.dom = performance.now();
      e.setAttribute('elementtiming', 'first-view');
      mo.disconnect();
      return;
    }
  });
  mo.observe(document, { childList: true, subtree: true });
}

// From navigation start (ms, the page's clock): when the first view's
// element was in the DOM, painted, and seen by waitForSelector; plus the
// bytes (decoded bodies) of the document and every resource it loaded.
async function firstView(ctx, url, selector) {
  const page = await ctx.newPage();
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForSelector(selector, { timeout: 10000 });
  const seen = await page.evaluate(() => performance.now());
  await page.waitForFunction(() => window.__firstView.painted !== undefined,
    null, { timeout: 10000 });
  const r = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource');
    // What the first view waited for: the requests done before its data
    // was in the DOM (the other views' modules come after it).
    const before = res.filter((e) => e.responseEnd <= window.__firstView.dom);
    return {
      dom: window.__firstView.dom,
      painted: window.__firstView.painted,
      bytes: (nav ? nav.decodedBodySize : 0) +
        before.reduce((n, e) => n + (e.decodedBodySize || 0), 0),
      requests: 1 + before.length,
      allBytes: (nav ? nav.decodedBodySize : 0) +
        res.reduce((n, e) => n + (e.decodedBodySize || 0), 0),
      allRequests: 1 + res.length,
    };
  });
  await page.close();
  return { ...r, seen };
}

const webDir = path.join(HERE, '..', 'broker', 'web');
const assetBytes = readdirSync(webDir)
  .reduce((n, f) => n + statSync(path.join(webDir, f)).size, 0);

const cordon = await startCordon({ demo: true });
const browser = await launchBrowser();
const srv = await floorServer();
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const UI_SEL = '#health-rows tr[data-daemon="broker"] th';
  const FLOOR_SEL = 'article.card';
  await ctx.addInitScript(firstViewProbe, [UI_SEL, FLOOR_SEL]);
  const login = await ctx.newPage();
  await login.goto(cordon.loginUrl, { waitUntil: 'load' });
  await login.close();
  const floorUrl = `http://127.0.0.1:${srv.address().port}/`;
  const ui = [], fl = [];
  let weight = null;
  // Interleaved, after one warm-up each (compile caches, first connection).
  await firstView(ctx, `${cordon.base}/ui/`, UI_SEL);
  await firstView(ctx, floorUrl, FLOOR_SEL);
  for (let i = 0; i < N; i++) {
    const a = await firstView(ctx, `${cordon.base}/ui/`, UI_SEL);
    ui.push(a);
    weight = a;
    fl.push(await firstView(ctx, floorUrl, FLOOR_SEL));
  }
  const col = (xs, k) => stats(xs.map((x) => x[k]));
  const line = (label, xs, k) => {
    const q = col(xs, k);
    return `${label}p50 ${q.p50.toFixed(1)} ms  p99 ${q.p99.toFixed(1)} ms`;
  };
  console.log(`bench_ui: ${N} first views of /ui/ (Health rows painted), Chromium ${browser.version()}`);
  console.log(line('  floor (static page + module + JSON fetch), painted: ', fl, 'painted'));
  console.log(line('  cordon /ui/ first view, painted:                    ', ui, 'painted') +
    '  (target < 200 ms)');
  console.log(`  ratio first-view/floor (p50, painted): ${(col(ui, 'painted').p50 / col(fl, 'painted').p50).toFixed(2)}`);
  console.log(line('  floor, in DOM:                                      ', fl, 'dom'));
  console.log(line('  cordon, in DOM:                                     ', ui, 'dom'));
  console.log(line('  floor, seen by waitForSelector (polls):             ', fl, 'seen'));
  console.log(line('  cordon, seen by waitForSelector (polls):            ', ui, 'seen'));
  console.log(`  first view: ${weight.requests} requests done before its data was in the DOM, ${weight.bytes} bytes decoded; ` +
    `the page by the last sample: ${weight.allRequests} requests, ${weight.allBytes} bytes`);
  console.log(`  all of broker/web/: ${assetBytes} bytes (target < 150 KB = 153600)`);
  await ctx.close();
} finally {
  srv.close();
  await browser.close();
  await cordon.stop();
}
