// PER-5 in headless Chromium: the session cookie is bound to the page.
// The login redirect hands the dashboard its page key in the fragment;
// api.js moves it into the origin's localStorage and out of the address
// bar, and sends it with every request.  The cookie, which the browser
// also sends to any other server on 127.0.0.1, is no session without it.
// Run: (cd tests/browser && npm ci) && node --test tests/browser/

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  startCordon, launchBrowser, watch, withTimeout, pageKeyHeaders, BUILD,
} from './harness.mjs';

const T = 30000; // per-test bound

let cordon;
let browser;
let ctx;
let w;
let page;

const isApi401 = (msg) => /status of 401/.test(msg.text()) &&
  new URL(msg.location().url).pathname.startsWith('/api/');

before(async () => {
  cordon = await startCordon();
  browser = await launchBrowser();
  ctx = await browser.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 720 } });
  w = await watch(ctx, { allow: [isApi401] });
  page = await ctx.newPage();
}, { timeout: T });

after(async () => {
  await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium')
    .catch(() => {});
  await cordon?.kill();
}, { timeout: T });

// The Health view of `p` shows every daemon up: the API answered it.
async function healthShown(p) {
  await p.evaluate(() => { location.hash = 'health'; });
  await p.waitForSelector('#health-status[data-status="ok"]', { timeout: 10000 });
  assert.equal(await p.isHidden('#signed-out'), true);
}

test('PER-5: the login lands without the key in the address bar; the page holds it', { timeout: T }, async () => {
  const resp = await page.goto(cordon.loginUrl, { waitUntil: 'load', timeout: 10000 });
  assert.equal(resp.status(), 200);
  const loc = (await resp.request().redirectedFrom().response()).headers().location;
  const m = /^\/ui\/#page=([0-9a-f]{64})$/.exec(loc ?? '');
  assert.ok(m, `the redirect carries the key in its fragment: ${loc}`);
  const landed = new URL(page.url());
  assert.equal(landed.pathname, '/ui/');
  assert.equal(landed.hash, '', 'the fragment is gone once the page has loaded');
  assert.equal(await page.evaluate(() => location.hash), '');
  assert.equal(await page.evaluate(() => localStorage.getItem('cordon.pageKey')), m[1]);
  await page.waitForSelector('#view-dynamic[data-view="agents"]');
  await healthShown(page);
});

test('PER-5: a reload and a second tab of the dashboard stay signed in', { timeout: T }, async () => {
  await page.reload({ waitUntil: 'load', timeout: 10000 });
  await page.waitForSelector('#health-status[data-status="ok"]', { timeout: 10000 });
  const tab = await ctx.newPage();
  await tab.goto(`${cordon.base}/ui/`, { waitUntil: 'load', timeout: 10000 });
  await healthShown(tab);
  await tab.close();
});

test('PER-5: the cookie another port received is no session without the page key', { timeout: T }, async () => {
  // Another local server on 127.0.0.1 that the operator's browser visits:
  // ports share cookies, so it receives cordon_session.
  let got = null;
  const other = http.createServer((req, res) => {
    if (req.headers.cookie) got = req.headers.cookie;
    res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'no-store' });
    res.end('<!doctype html><title>other port</title><p>other port</p>');
  });
  await new Promise((r) => other.listen(0, '127.0.0.1', r));
  try {
    const p = await ctx.newPage();
    await p.goto(`http://127.0.0.1:${other.address().port}/`, { waitUntil: 'load', timeout: 10000 });
    await p.close();
  } finally {
    await new Promise((r) => other.close(r));
  }
  assert.match(got ?? '', /(^|;\s*)cordon_session=[0-9a-f]{64}/, 'the other port got the cookie');
  // Its owner replays it with a client that sets every header it likes.
  const replay = (route, extra = {}, init = {}) => fetch(`${cordon.base}${route}`, {
    ...init,
    headers: { Cookie: got, Referer: `${cordon.base}/ui/`, ...init.headers, ...extra },
  });
  for (const route of ['/api/health', '/api/agents']) {
    const r = await replay(route);
    assert.equal(r.status, 401, route);
    assert.deepEqual(await r.json(), { ok: false, error: 'unauthorized' });
  }
  const post = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"decision":"deny"}' };
  assert.equal((await replay('/api/approvals/0123456789abcdef', {}, post)).status, 401);
  // With the key only the dashboard's origin holds, the same requests pass.
  const key = await pageKeyHeaders(page);
  assert.equal((await replay('/api/health', key)).status, 200);
  assert.equal((await replay('/api/agents', key)).status, 200);
  assert.equal((await replay('/api/approvals/0123456789abcdef', key, post)).status, 404);
});

// A fresh one-time login URL from `cordon login`, as the operator gets it.
function freshLogin() {
  const out = execFileSync(path.join(BUILD, 'cordon'), ['login', '--home', cordon.home],
    { encoding: 'utf8', timeout: 10000 });
  return /http:\/\/127\.0\.0\.1:\d+\/ui\/login\?code=[0-9a-f]{32}/.exec(out)[0];
}

const stored = (p) => p.evaluate(() => localStorage.getItem('cordon.pageKey'));

test('PER-5: a link to the dashboard with another key signs no one out', { timeout: T }, async () => {
  const p = await ctx.newPage();
  await p.goto(freshLogin(), { waitUntil: 'load', timeout: 10000 });
  await healthShown(p);
  const good = await stored(p);
  assert.match(good ?? '', /^[0-9a-f]{64}$/);
  // Another page links the operator to the dashboard with a key of its
  // own: the fragment leaves the address bar, the good key stays.
  for (const bad of ['0'.repeat(64), 'f'.repeat(64)]) {
    const tab = await ctx.newPage();
    await tab.goto(`${cordon.base}/ui/#page=${bad}`, { waitUntil: 'load', timeout: 10000 });
    assert.equal(new URL(tab.url()).hash, '');
    await healthShown(tab);
    assert.equal(await stored(tab), good);
    await tab.close();
  }
  await p.reload({ waitUntil: 'load', timeout: 10000 });
  await healthShown(p);
  // A fresh login's key is adopted once the API takes it.
  await p.goto(freshLogin(), { waitUntil: 'load', timeout: 10000 });
  assert.equal(new URL(p.url()).hash, '');
  await healthShown(p);
  const fresh = await stored(p);
  assert.match(fresh ?? '', /^[0-9a-f]{64}$/);
  assert.notEqual(fresh, good);
  await p.close();
});

test('PER-5: storage without the key shows the signed-out state', { timeout: T }, async () => {
  await page.evaluate(() => {
    localStorage.removeItem('cordon.pageKey');
    location.hash = 'agents';
  });
  await page.reload({ waitUntil: 'load', timeout: 10000 });
  await page.waitForSelector('#signed-out:not([hidden])', { timeout: 10000 });
  // A fragment that is no key is taken out of the address bar too, and
  // stores nothing.
  const tab = await ctx.newPage();
  await tab.goto(`${cordon.base}/ui/#page=${'0'.repeat(63)}z`, { waitUntil: 'load', timeout: 10000 });
  assert.equal(new URL(tab.url()).hash, '');
  assert.equal(await tab.evaluate(() => localStorage.getItem('cordon.pageKey')), null);
  await tab.waitForSelector('#signed-out:not([hidden])', { timeout: 10000 });
  await tab.close();
  assert.deepEqual(w.csp, [], 'CSP violations');
  assert.deepEqual(w.consoleErrors, [], 'console errors');
  assert.deepEqual(w.pageErrors, [], 'page errors');
});
