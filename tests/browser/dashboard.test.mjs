// Every dashboard view in headless Chromium (DA-1, DA-2, DA-3, PER-6,
// PER-7), against a real `cordon run --demo` with an extra agent that has
// Control Room actions and a hostile vault note.  A view whose API this
// build does not implement yet (HTTP 501) must show the neutral panel; the
// test asserts that instead and logs which flows it could not exercise.
// Talks to 127.0.0.1 only.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import http from 'node:http';
import {
  startCordon, launchBrowser, watch, outPath, withTimeout, checkUnavailable, descendantsOf,
  pageKeyHeaders,
} from './harness.mjs';

const T = 60000;
const TOOLS = `# Browser-test agent: Control Room actions and a slow run.
name: tools
displayName: Tool bench
description: Actions that answer, time out, flood and fail.
transport: subprocess
transportConfig:
  bin: /bin/sleep
  args: ["30"]
  timeoutMs: 60000
promptVia: stdin
healthProbe:
  type: command
  command: ["/bin/echo", "tools 1.0"]
  timeoutMs: 2000
actions:
  - id: hello
    label: Say hello
    command: ["/bin/echo", "hello from an action"]
    hint: echo
  - id: slow
    label: Too slow
    command: ["/bin/sleep", "10"]
    timeoutMs: 1000
    hint: times out
  - id: flood
    label: Flood
    command: ["/usr/bin/yes", "cordon"]
    hint: truncated
`;
// VA-2 / DA-1: raw HTML, script, handlers and foreign links stay text.
const HOSTILE = `---
type: note
---
# Hostile <b>note</b>

<script>window.__pwned = 1</script>
<img src="/api/health" onerror="window.__pwned = 2">
A [foreign link](http://127.0.0.1:9/x) and a [script link](javascript:window.__pwned=3),
an [inside link](10_Projects/cordon.md) and a wiki link [[Welcome]].

![tracker](http://127.0.0.1:9/pixel.png)

Escaped \\*not em\\* \\[\\[NotLinked\\]\\] \\[x\\]\\(javascript\\:window\\.\\_\\_pwned\\=4\\) src\\/a\\.py\\
&#32;   indented\\\\
`;

let cordon;
let browser;
let ctx;
let w;
let page;
const api = {}; // route -> HTTP status of a probe from the signed-in context
const untested = []; // flows this build could not exercise (API 501)

const live = (route) => api[route] !== 501 && api[route] !== 404;

async function probe(route) {
  const r = await ctx.request.get(`${cordon.base}${route}`,
    { failOnStatusCode: false, headers: await pageKeyHeaders(page) });
  return r.status();
}

before(async () => {
  cordon = await startCordon({
    demo: true,
    files: { 'agents/tools.yaml': TOOLS, 'vault/Hostile.md': HOSTILE },
  });
  browser = await launchBrowser();
  ctx = await browser.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 800 } });
  w = await watch(ctx);
  page = await ctx.newPage();
  await page.goto(cordon.loginUrl, { waitUntil: 'load', timeout: 10000 });
  assert.equal(new URL(page.url()).pathname, '/ui/');
  // (The vault probe lists a subfolder: see the todo test on root listings.)
  for (const r of ['/api/agents', '/api/agents/demo', '/api/vault/notes?dir=00_Inbox', '/api/audit?limit=1', '/api/approvals'])
    api[r] = await probe(r);
}, { timeout: T });

after(async () => {
  if (untested.length) console.log(`# not exercised (API not implemented): ${untested.join('; ')}`);
  await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium').catch(() => {});
  await cordon?.kill();
}, { timeout: T });

async function go(hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForFunction((h) => document.getElementById('view-dynamic').dataset.view === h.split('/')[0],
    hash, { timeout: 5000 });
}

async function unavailableShown(what) {
  const sel = '#view-dynamic .panel.unavailable';
  await page.waitForSelector(sel, { timeout: 5000 });
  assert.equal((await page.textContent(sel)).trim(), `${what} is not available in this build yet.`);
}

// Full-page PNG for CI artifacts, plus a small viewport JPEG for the docs.
async function shot(name) {
  await page.screenshot({ path: outPath(name), fullPage: true });
  await page.screenshot({ path: outPath(name.replace(/\.png$/, '.jpg')), type: 'jpeg', quality: 55 });
}

test('DA-1: Agents view lists the demo agent with readiness, or says it is not available', { timeout: T }, async () => {
  await go('agents');
  if (!live('/api/agents')) {
    await unavailableShown('The agent list');
    untested.push('agent cards');
  } else {
    const card = page.locator('.agent-card[data-agent="demo"]');
    await card.waitFor({ timeout: 10000 });
    await page.waitForSelector('.agent-card[data-agent="demo"] .readiness[data-status="live"]', { timeout: 20000 });
    assert.match(await card.locator('.version').textContent(), /cordon-demo-agent 0\.1\.0/);
    assert.equal(await card.locator('h3 a.card-title').textContent(), 'Demo agent');
    assert.equal(await card.locator('h3 a.card-title').getAttribute('href'), '#agent/demo');
    assert.equal(await card.locator('.missing').getAttribute('data-count'), '0');
    assert.equal(await page.locator('.agent-card[data-agent="tools"]').count(), 1, 'tools agent card');
  }
  // DA-2 settings are there whatever the API says.
  assert.equal(await page.isVisible('#memory-only'), true);
  assert.equal(await page.isVisible('button.clear-cache'), true);
  await shot('agents.png');
});

test('DA-1/VA-2: Vault tree and a safe Markdown reader', { timeout: T }, async () => {
  await go('vault');
  if (!live('/api/vault/notes?dir=00_Inbox')) {
    await unavailableShown('The vault');
    untested.push('vault tree and reader');
    await shot('vault.png');
    return;
  }
  await page.waitForSelector('.tree a.note-link[data-note="Welcome.md"]', { timeout: 10000 });
  await page.click('.tree a.note-link[data-note="Hostile.md"]');
  await page.waitForSelector('.reader[data-state="ok"] .md', { timeout: 10000 });
  const r = await page.evaluate(() => {
    const md = document.querySelector('.reader .md');
    return {
      scripts: md.querySelectorAll('script, img, iframe, b, [onerror]').length,
      hrefs: [...md.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      inert: [...md.querySelectorAll('.md-link-inert')].map((s) => s.textContent),
      text: md.textContent,
      brs: md.querySelectorAll('p br').length,
      pwned: window.__pwned,
    };
  });
  assert.equal(r.scripts, 0);
  assert.equal(r.pwned, undefined);
  assert.ok(r.text.includes('<script>'), 'raw HTML shown as text');
  // VA-5: cordon's escaped text reads as the plain text it stands for.
  assert.ok(r.text.includes('Escaped *not em* [[NotLinked]] [x](javascript:window.__pwned=4) src/a.py'),
    'backslash escapes shown as their characters');
  assert.ok(r.text.includes('indented\\'), 'an escaped backslash kept');
  assert.equal(r.brs, 1, 'one hard break');
  assert.deepEqual(r.inert, ['foreign link', 'script link']);
  assert.deepEqual(r.hrefs, ['#vault/10_Projects/cordon.md', '#vault/Welcome.md']);
  await shot('vault.png');
  await page.click('.reader a.md-link[data-note="Welcome.md"]');
  await page.waitForFunction(() => document.querySelector('.reader')?.dataset.note === 'Welcome.md', null, { timeout: 10000 });
});

test('DA-1/DA-2: agent room streams, restores after reload, New session clears', { timeout: T }, async () => {
  await go('agent/demo');
  if (!live('/api/agents/demo')) {
    await unavailableShown('The agent page');
    untested.push('chat streaming, reload restore, New session, saved-note link');
    await shot('room.png');
    return;
  }
  await page.waitForSelector('#prompt', { timeout: 10000 });
  // Record every (state, text length) the live message goes through.
  await page.evaluate(() => {
    window.__seen = [];
    new MutationObserver(() => {
      const m = document.querySelector('.msg-agent:last-child');
      if (m) window.__seen.push([m.dataset.state, m.querySelector('.msg-text').textContent.length]);
    }).observe(document.querySelector('.chat-log'), { subtree: true, childList: true, characterData: true });
  });
  await page.fill('#prompt', 'hello from the browser test');
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector('.msg-agent[data-state="done"]', { timeout: 20000 });
  const seen = await page.evaluate(() => window.__seen);
  assert.ok(seen.some(([st, n]) => st === 'running' && n > 0), `tokens before the end: ${JSON.stringify(seen.slice(0, 20))}`);
  const text = await page.textContent('.msg-agent .msg-text');
  assert.match(text, /Hello from the cordon demo agent\./);
  assert.ok(!text.includes('\u001b'), 'ANSI stripped');
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem('cordon.chat.demo')));
  assert.equal(stored.messages.length, 2);
  await shot('room.png');

  // Reload: the chat is back (DA-2).
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('.msg-agent[data-state="done"]', { timeout: 10000 });
  assert.match(await page.textContent('.msg-user .msg-text'), /hello from the browser test/);

  // The saved note opens in the Vault view.
  const saved = page.locator('.msg-agent a.saved-link');
  if (await saved.count()) {
    const note = await saved.getAttribute('data-note');
    await saved.click();
    await page.waitForFunction((n) => document.querySelector('.reader')?.dataset.note === n, note, { timeout: 10000 });
    await page.waitForSelector('.reader[data-state="ok"] .md', { timeout: 10000 });
    await page.goBack();
    await page.waitForSelector('#prompt', { timeout: 10000 });
  } else {
    untested.push('saved-note link (no saved event)');
  }

  await page.click('button.new-session');
  assert.equal(await page.locator('.chat-log .msg').count(), 0);
  const after = await page.evaluate(() => localStorage.getItem('cordon.chat.demo'));
  assert.ok(after === null || JSON.parse(after).messages.length === 0, 'stored chat cleared');
});

test('DA-1/API-4: Stop and Stop all cancel a long run', { timeout: T }, async () => {
  await go('agent/tools');
  if (!live('/api/agents/demo')) {
    await unavailableShown('The agent page');
    assert.equal(await page.isDisabled('#stop-all'), true, 'Stop all idle');
    untested.push('Stop, Stop all, Esc');
    return;
  }
  await page.waitForSelector('#prompt', { timeout: 10000 });
  const sleepers = () => Object.values(cordon.daemonPids()).flatMap((p) => descendantsOf(p))
    .filter((k) => k.comm === 'sleep');
  for (const how of ['button', 'escape', 'stop-all']) {
    await page.fill('#prompt', `long run stopped by ${how}`);
    await page.click('button.send');
    await page.waitForFunction(() => document.querySelector('.room').dataset.running === 'yes');
    await page.waitForFunction(() => !document.getElementById('stop-all').disabled, null, { timeout: 5000 });
    const t0 = Date.now();
    while (!sleepers().length && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
    assert.ok(sleepers().length, `${how}: the run's process exists`);
    if (how === 'button') await page.click('button.stop');
    else if (how === 'escape') await page.keyboard.press('Escape');
    else await page.click('#stop-all');
    await page.waitForSelector('.msg-agent:last-child[data-state="stopped"]', { timeout: 10000 });
    const t1 = Date.now();
    while (sleepers().length && Date.now() - t1 < 5000) await new Promise((r) => setTimeout(r, 50));
    assert.equal(sleepers().length, 0, `${how}: process gone`);
  }
  assert.equal(await page.isDisabled('#stop-all'), true);
});

test('DA-1/API-5: Control Room chips — output, timeout, truncated', { timeout: T }, async () => {
  await go('agent/tools');
  if (!live('/api/agents/demo')) {
    await unavailableShown('The agent page');
    untested.push('Control Room chips');
    return;
  }
  await page.waitForSelector('.chip[data-action="hello"]', { timeout: 10000 });
  await page.click('.chip[data-action="hello"]');
  await page.waitForSelector('.viewer[data-action="hello"]:not([data-state="running"])', { timeout: 15000 });
  assert.equal(await page.getAttribute('.viewer', 'data-state'), 'ok');
  assert.match(await page.textContent('.viewer .stdout .out'), /hello from an action/);

  await page.click('.chip[data-action="slow"]');
  await page.waitForSelector('.viewer[data-action="slow"][data-state="error"]', { timeout: 15000 });
  assert.equal(await page.textContent('.viewer .error-pill'), 'timeout');
  assert.notEqual((await page.textContent('.viewer .error-msg')).trim(), '', 'stock message shown');

  await page.click('.chip[data-action="flood"]');
  await page.waitForSelector('.viewer[data-action="flood"]:not([data-state="running"])', { timeout: 15000 });
  assert.equal(await page.locator('.viewer .pill-warn', { hasText: 'truncated' }).count(), 1, 'truncated badge');
  await shot('control-room.png');
});

test('DA-1: Activity shows the audit tail with filters', { timeout: T }, async () => {
  await go('activity');
  if (!live('/api/audit?limit=1')) {
    await unavailableShown('The activity log');
    untested.push('activity tail and filters');
    await shot('activity.png');
    return;
  }
  await page.waitForSelector('#activity-rows tr', { timeout: 10000 });
  await page.selectOption('#filter-kind', 'http.request');
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('#activity-rows tr')];
    return rows.length > 0 && rows.every((r) => r.dataset.kind === 'http.request');
  }, null, { timeout: 10000 });
  if (live('/api/agents/demo')) {
    // The chat run and the Control Room actions of the tests above.
    await page.selectOption('#filter-kind', 'agent.invoke');
    await page.waitForSelector('#activity-rows tr[data-agent="demo"]', { timeout: 10000 });
    await page.selectOption('#filter-kind', 'agent.action');
    await page.waitForSelector('#activity-rows tr[data-agent="tools"]', { timeout: 10000 });
    await page.selectOption('#filter-agent', 'tools');
    await page.waitForFunction(() => [...document.querySelectorAll('#activity-rows tr')]
      .every((r) => r.dataset.agent === 'tools' && r.dataset.kind === 'agent.action'), null, { timeout: 10000 });
    await page.selectOption('#filter-agent', '');
  }
  await page.selectOption('#filter-kind', '');
  await shot('activity.png');
});

// Regression: vault_open_dir() once handed back a dup of the held root fd
// for "", which shares its offset, so only the first root listing worked.
test('DA-1/API-6: re-opening the Vault lists the root again', {
  timeout: T,
}, async () => {
  if (!live('/api/vault/notes?dir=00_Inbox')) return;
  await go('activity');
  await go('vault');
  await page.waitForSelector('.tree a.note-link[data-note="Welcome.md"]', { timeout: 5000 });
});

test('DA-1: Missions lists the demo missions; Approvals lists nothing waiting', { timeout: T }, async () => {
  await go('missions');
  // Runs, the form and refusals: missions.test.mjs.
  await page.waitForSelector('.missions-body[data-state="ok"] .mission-card[data-mission="weekly-review"]', { timeout: 10000 });
  assert.ok(await page.isVisible('.mission-card[data-mission="daily-summary"] button.run-mission'));
  await shot('missions.png');
  // A real run with options through the page, then its record in Activity.
  const c = '.mission-card[data-mission="weekly-review"]';
  await page.fill(`${c} :is(input, select)[data-option="project"]`, 'dashboard test');
  await page.selectOption(`${c} :is(input, select)[data-option="tone"]`, 'formal');
  await page.click(`${c} button.run-mission`);
  await page.waitForSelector(`${c} .mission-result[data-state="done"] .run-facts[data-status="success"]`,
    { timeout: 20000 });
  await go('activity');
  await page.selectOption('#filter-kind', 'mission.run');
  await page.waitForSelector('#activity-rows tr[data-kind="mission.run"]', { timeout: 10000 });
  assert.equal(await page.locator('#activity-rows').textContent().then((t) => t.includes('dashboard test')), false,
    'mission options never reach the audit trail');
  await page.selectOption('#filter-kind', '');
  await go('approvals');
  if (!live('/api/approvals')) {
    await unavailableShown('Approving held commands');
    untested.push('approvals (cordon gate absent)');
    return;
  }
  // Held commands themselves: approvals.test.mjs.
  await page.waitForSelector('.approvals-body[data-state="ok"] .approvals-empty', { timeout: 10000 });
  assert.equal(await page.isHidden('#approvals-banner'), true);
});

test('DA-2: memory-only setting and "clear all chat cache"', { timeout: T }, async () => {
  await go('agents');
  await page.evaluate(() => {
    localStorage.setItem('cordon.chat.demo', JSON.stringify({ v: 1, session: 's-1', messages: [{ role: 'user', text: 'x' }] }));
    localStorage.setItem('cordon.chat.tools', JSON.stringify({ v: 1, session: 's-2', messages: [] }));
  });
  await page.check('#memory-only');
  const keys = () => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('cordon.chat.')));
  assert.deepEqual(await keys(), [], 'memory only moves chats off the disk');
  await page.uncheck('#memory-only');
  assert.deepEqual((await keys()).sort(), ['cordon.chat.demo', 'cordon.chat.tools']);
  await page.click('button.clear-cache');
  assert.deepEqual(await keys(), []);
  assert.match(await page.textContent('.settings-note'), /All chats cleared\./);
});

test('DA-1: Health view still reports every daemon', { timeout: T }, async () => {
  await go('health');
  await page.waitForSelector('#health-status[data-status="ok"]', { timeout: 10000 });
  await shot('health-all.png');
});

test('DA-1: a signed-out page backs off instead of hammering the API', { timeout: T }, async () => {
  const other = await browser.newContext();
  try {
    const is401 = (m) => /status of 401/.test(m.text());
    const ow = await watch(other, { allow: [is401] });
    const p = await other.newPage();
    const hits = [];
    p.on('request', (r) => { if (new URL(r.url()).pathname.startsWith('/api/')) hits.push(Date.now()); });
    await p.goto(`${cordon.base}/ui/#health`, { waitUntil: 'load' });
    await p.waitForSelector('#health-status[data-status="signed-out"]');
    await new Promise((r) => setTimeout(r, 10000));
    // Polling every 2 s would be 5-6 calls; the back-off doubles: 0, 2, 6, 14 s.
    assert.ok(hits.length >= 2 && hits.length <= 4, `${hits.length} API calls in 10 s`);
    await p.evaluate(() => { location.hash = 'agents'; });
    await p.waitForSelector('#signed-out:not([hidden])');
    await p.waitForSelector('#view-dynamic .panel.signed-out');
    assert.deepEqual(ow.csp, []);
    assert.deepEqual(ow.consoleErrors, []);
  } finally {
    await other.close();
  }
});

// PER-3/PER-4/PER-6/PER-7: a page on another local origin, in the same
// browser with the operator's session cookie, reads nothing and triggers
// nothing: credentialed fetch, form POST, image GET of an action URL, and
// framing the dashboard.
test('PER-4/PER-7: another origin cannot read or trigger anything in cordon', { timeout: T }, async () => {
  const evil = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'no-store' });
    res.end('<!doctype html><title>other origin</title><iframe name="sink"></iframe>');
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  const other = await browser.newContext();
  try {
    await other.addCookies(await ctx.cookies(cordon.base));
    const ow = await watch(other);
    const p = await other.newPage();
    const cdp = await other.newCDPSession(p);
    const wire = new Map();
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.request.url.startsWith(cordon.base)) wire.set(e.requestId, { url: e.request.url, method: e.request.method, status: null });
    });
    cdp.on('Network.responseReceivedExtraInfo', (e) => { if (wire.has(e.requestId)) wire.get(e.requestId).status = e.statusCode; });
    await cdp.send('Network.enable');
    await p.goto(`http://127.0.0.1:${evil.address().port}/`, { waitUntil: 'load' });
    const actions0 = await audited('agent.action');
    const invokes0 = await audited('agent.invoke');

    const seen = await p.evaluate(async (base) => {
      const out = {};
      const tryFetch = async (url, init) => {
        try {
          const r = await fetch(url, init);
          return { type: r.type, status: r.status, body: await r.text() };
        } catch (e) {
          return { error: String(e) };
        }
      };
      out.read = await tryFetch(`${base}/api/agents`, { credentials: 'include' });
      out.run = await tryFetch(`${base}/api/agents/demo/run`, {
        method: 'POST', mode: 'no-cors', credentials: 'include',
        headers: { 'Content-Type': 'text/plain' }, body: '{"prompt":"pwn"}',
      });
      // Form POST into a frame: a top-level-like navigation with the cookie.
      const f = document.createElement('form');
      f.method = 'POST';
      f.action = `${base}/api/agents/tools/actions/hello`;
      f.target = 'sink';
      f.enctype = 'text/plain';
      const i = document.createElement('input');
      i.name = '{"a":"';
      i.value = '"}';
      f.append(i);
      document.body.append(f);
      f.submit();
      out.img = await new Promise((res) => {
        const im = new Image();
        im.onload = () => res('loaded');
        im.onerror = () => res('error');
        im.src = `${base}/api/agents/tools/actions/hello`;
      });
      const fr = document.createElement('iframe');
      fr.src = `${base}/ui/`;
      document.body.append(fr);
      await new Promise((r) => { fr.onload = r; setTimeout(r, 3000); });
      try {
        out.frame = fr.contentDocument ? fr.contentDocument.body.textContent : null;
      } catch (e) {
        out.frame = `blocked: ${e.name}`;
      }
      return out;
    }, cordon.base);
    await new Promise((r) => setTimeout(r, 1000));

    assert.match(seen.read.error || '', /TypeError/, `credentialed read: ${JSON.stringify(seen.read)}`);
    // no-cors: an opaque empty answer, or none at all (CORP blocks it).
    assert.ok(seen.run.error ? /TypeError/.test(seen.run.error) :
      seen.run.type === 'opaque' && seen.run.body === '', `run: ${JSON.stringify(seen.run)}`);
    assert.equal(seen.img, 'error');
    assert.ok(seen.frame === null || seen.frame.startsWith('blocked') || seen.frame === '', `frame: ${seen.frame}`);
    // The form POST, the image and the frame always report their status;
    // Chromium may report none for the two fetches its CORS check refused.
    const reached = [...wire.values()].filter((e) => e.status !== null);
    assert.ok(reached.length >= 3, `requests that reached cordon: ${JSON.stringify([...wire.values()])}`);
    for (const e of reached) assert.equal(e.status, 403, `${e.method} ${e.url} answered ${e.status}`);
    // Nothing ran: no new action or run in the audit trail.
    assert.equal(await audited('agent.action'), actions0);
    assert.equal(await audited('agent.invoke'), invokes0);
    // The only CSP report is the dashboard refusing to be framed, if the
    // browser got that far at all.
    for (const v of ow.csp) assert.match(JSON.stringify(v), /frame-ancestors/);
    await cdp.detach();
  } finally {
    await other.close();
    await new Promise((r) => evil.close(r));
  }
});

async function audited(kind) {
  if (!live('/api/audit?limit=1')) return null;
  const r = await ctx.request.get(`${cordon.base}/api/audit?kind=${kind}&limit=1000`,
    { headers: await pageKeyHeaders(page) });
  return (await r.json()).records.length;
}

test('DA-3/PER-6: the whole session had no CSP violation and no console error', { timeout: T }, async () => {
  const n = await checkUnavailable(w);
  console.log(`# console errors attributed to known-501 routes: ${n}`);
  assert.deepEqual(w.csp, [], 'CSP violations');
  assert.deepEqual(w.consoleErrors, [], 'console errors');
  assert.deepEqual(w.pageErrors, [], 'page errors');
  assert.deepEqual(w.failedRequests, [], 'failed requests');
});

test('DA-3: the dashboard weighs under 150 KB uncompressed', { timeout: T }, async () => {
  const p = await ctx.newPage();
  await p.goto(`${cordon.base}/ui/#missions`, { waitUntil: 'networkidle' });
  // The browser's own accounting: the page and every /ui/ resource.
  const bytes = await p.evaluate(() => [
    ...performance.getEntriesByType('navigation'),
    ...performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname.startsWith('/ui/')),
  ].reduce((n, e) => n + e.decodedBodySize, 0));
  // First view timing, reported (not asserted): DOMContentLoaded and the
  // first contentful paint of the Missions view, from the browser's own clock.
  const t = await p.evaluate(() => ({
    dcl: Math.round(performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd),
    fcp: Math.round(performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1),
  }));
  console.log(`# dashboard: ${bytes} bytes; DOMContentLoaded ${t.dcl} ms, first paint ${t.fcp} ms`);
  await p.close();
  assert.ok(bytes > 10000 && bytes < 150 * 1024, `dashboard is ${bytes} bytes`);
  assert.ok(existsSync(outPath('agents.png')));
});
