// bench_ui: the dashboard's first view and page weight, in the browser's
// own timing (issue 7: first view under 200 ms on a local connection, whole
// dashboard under 150 KB uncompressed).  Never asserted in tests.
//
// Starts a real `cordon run --demo` from $CORDON_BUILD (default
// /work/main/build) and Debian's headless Chromium through the browser
// tests' harness, logs in once, then loads /ui/ N times (default 20) in a
// fresh page each time and measures, from the navigation's start, the
// moment the first view (Health: one row per daemon, from /api/health) is
// in the DOM.  Floor, in the same run and
// the same browser: a page from a local node:http server on 127.0.0.1
// that loads one module which fetches a JSON document and renders one
// element from it, the same shape of work without cordon.
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

// Milliseconds from navigation start until selector exists, plus the bytes
// (decoded bodies) of the document and every resource it loaded.
async function firstView(ctx, url, selector) {
  const page = await ctx.newPage();
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForSelector(selector, { timeout: 10000 });
  const r = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource');
    return {
      ms: performance.now(),
      bytes: (nav ? nav.decodedBodySize : 0) +
        res.reduce((n, e) => n + (e.decodedBodySize || 0), 0),
      requests: 1 + res.length,
    };
  });
  await page.close();
  return r;
}

const webDir = path.join(HERE, '..', 'broker', 'web');
const assetBytes = readdirSync(webDir)
  .reduce((n, f) => n + statSync(path.join(webDir, f)).size, 0);

const cordon = await startCordon({ demo: true });
const browser = await launchBrowser();
const srv = await floorServer();
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const login = await ctx.newPage();
  await login.goto(cordon.loginUrl, { waitUntil: 'load' });
  await login.close();
  const floorUrl = `http://127.0.0.1:${srv.address().port}/`;
  const ui = [], fl = [];
  let weight = null;
  // Interleaved, after one warm-up each (compile caches, first connection).
  await firstView(ctx, `${cordon.base}/ui/`, '#health-rows tr[data-daemon="broker"]');
  await firstView(ctx, floorUrl, 'article.card');
  for (let i = 0; i < N; i++) {
    const a = await firstView(ctx, `${cordon.base}/ui/`, '#health-rows tr[data-daemon="broker"]');
    ui.push(a.ms);
    weight = a;
    fl.push((await firstView(ctx, floorUrl, 'article.card')).ms);
  }
  const u = stats(ui), f = stats(fl);
  console.log(`bench_ui: ${N} first views of /ui/ (Health rows rendered), Chromium ${browser.version()}`);
  console.log(`  floor (static page + module + JSON fetch): p50 ${f.p50.toFixed(1)} ms  p99 ${f.p99.toFixed(1)} ms`);
  console.log(`  cordon /ui/ first view:                    p50 ${u.p50.toFixed(1)} ms  p99 ${u.p99.toFixed(1)} ms  (target < 200 ms)`);
  console.log(`  ratio first-view/floor (p50): ${(u.p50 / f.p50).toFixed(2)}`);
  console.log(`  first view loads ${weight.requests} documents, ${weight.bytes} bytes decoded; ` +
    `all of broker/web/: ${assetBytes} bytes (target < 150 KB = 153600)`);
  await ctx.close();
} finally {
  srv.close();
  await browser.close();
  await cordon.stop();
}
