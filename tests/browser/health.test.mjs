// Health view of the cordon dashboard in headless Chromium.
// Run: (cd tests/browser && npm ci) && node --test tests/browser/
// Needs a built tree (CORDON_BUILD, default /work/main/build), root, and
// /usr/bin/chromium. Talks to 127.0.0.1 only.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  startCordon, launchBrowser, watch, healthRows, outPath, cordonVersion, withTimeout, wireLog,
} from './harness.mjs';

const T = 30000; // per-test bound
const DAEMONS = ['auditd', 'vaultd', 'egressd', 'gated', 'spawner', 'sched', 'broker'];
const LANDLOCKED = ['auditd', 'vaultd', 'gated', 'sched', 'broker'];
const CSP_RE = new RegExp(
  "^default-src 'none'; script-src 'self' 'nonce-([0-9a-f]+)'; " +
  "style-src 'self' 'nonce-\\1'; .*connect-src 'self'; .*" +
  "frame-ancestors 'none'; base-uri 'none'$");

// Two agents whose runs get different sandboxes (SBX-1..5), for the
// per-agent layers table.
const agent = (name, sandbox) => `name: ${name}
transport: subprocess
transportConfig:
  bin: /bin/echo
  args: ["{prompt}"]
${sandbox}`;
const AGENTS = {
  // SBX-4: what runs get; `isolation: landlock` weakens nothing.
  walled: { isolation: 'namespace', network: 'none' },
  roomy: { isolation: 'namespace', network: 'allow' },
};

let cordon;
let browser;
const perimeterLog = [];
let session; // the signed-in context, shared by the tests that need the cookie

before(async () => {
  cordon = await startCordon({
    files: {
      'agents/walled.yaml': agent('walled', 'sandbox:\n  isolation: landlock\n  network: none\n'),
      'agents/roomy.yaml': agent('roomy', 'sandbox:\n  isolation: namespace\n  network: allow\n'),
    },
  });
  browser = await launchBrowser();
}, { timeout: T });

after(async () => {
  await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium')
    .catch(() => {});
  await cordon?.kill(); // no-op unless the SIGTERM test did not get to run
}, { timeout: T });

const isApi401 = (msg) =>
  /status of 401/.test(msg.text()) && new URL(msg.location().url).pathname === '/api/health';

test('DA-3/PER-6: login URL lands on /ui/ and shows every daemon up and confined', { timeout: T }, async () => {
  session = await browser.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 720 } });
  const w = await watch(session);
  const page = await session.newPage();

  const resp = await page.goto(cordon.loginUrl, { waitUntil: 'load', timeout: 10000 });
  const landed = new URL(page.url());
  assert.equal(landed.origin, cordon.base);
  assert.equal(landed.pathname, '/ui/');
  assert.equal(landed.search, '', 'the login code must not stay in the address bar');
  assert.equal(resp.status(), 200);
  assert.equal(resp.request().redirectedFrom()?.url(), cordon.loginUrl);
  assert.equal((await resp.request().redirectedFrom().response()).status(), 303);
  assert.match(resp.headers()['content-security-policy'] ?? '', CSP_RE);

  // The default view is Agents (firsthour.test.mjs); go to Health and
  // wait for the first /api/health answer to render.
  await page.waitForSelector('#view-dynamic[data-view="agents"]');
  await page.evaluate(() => { location.hash = 'health'; });
  await page.waitForSelector('#health-status[data-status="ok"]', { timeout: 10000 });
  await page.waitForFunction((n) => document.querySelectorAll('#health-rows tr').length === n,
    DAEMONS.length, { timeout: 5000 });
  assert.equal(await page.isVisible('#view-health'), true);
  assert.equal(await page.isHidden('#view-unavailable'), true);
  assert.equal(await page.getAttribute('#nav a[data-view="health"]', 'aria-current'), 'page');
  assert.equal(await page.textContent('#health-status'), `OK — all ${DAEMONS.length} daemons up`);
  assert.equal(await page.isHidden('#health-notice'), true);
  assert.equal(await page.title(), 'Health · cordon');

  const rows = await healthRows(page);
  assert.deepEqual(rows.map((r) => r.daemon), DAEMONS, 'rows in order');
  for (const r of rows) {
    const at = `row ${r.daemon}`;
    assert.equal(r.name, r.daemon, at);
    assert.equal(r.state.text, 'up', at);
    assert.match(r.pid.text, /^[1-9]\d*$/, `${at} pid`);
    assert.equal(r.restarts.text, '0', `${at} restarts`);
    assert.match(r.uid.text, /^\d+$/, `${at} uid`);
    assert.equal(r.caps.text, '0000000000000000', `${at} CapEff`);
    assert.equal(r.nnp.text, 'yes', `${at} no_new_privs`);
    assert.equal(r.seccomp.text, 'filter', `${at} seccomp`);
    assert.equal(r.seccomp.value, '2', `${at} seccomp raw`);
    assert.notEqual(r.landlock.text, '—', `${at} landlock shown`);
    if (LANDLOCKED.includes(r.daemon)) {
      assert.equal(r.landlock.value, 'on', `${at} landlock`);
      assert.match(r.landlock.text, /^on( \(ABI \d+\))?$/, `${at} landlock text`);
    }
  }
  // The PIDs shown are the daemons cordon really runs (from /proc).
  const real = cordon.daemonPids();
  assert.deepEqual(Object.fromEntries(rows.map((r) => [r.daemon, Number(r.pid.text)])),
    Object.fromEntries(DAEMONS.map((d) => [d, real[d]])), 'PID column vs /proc');

  // Version matches the binary's own.
  assert.equal(await page.textContent('#version'), cordonVersion());

  // SBX-1..5: the layers this host offers, as the spawner reports them.
  const api = async (route) => JSON.parse((await probe(page, `${cordon.base}${route}`, 'same-origin')).body);
  const spStatus = (await api('/api/health')).daemons.find((d) => d.name === 'spawner').status;
  const host = spStatus.sandboxHost;
  const pids = spStatus.pidsCgroup;
  assert.ok(pids && typeof pids.state === 'string', `spawner pidsCgroup: ${JSON.stringify(pids)}`);
  assert.ok(host && Number.isInteger(host.landlockAbi), `spawner sandboxHost: ${JSON.stringify(host)}`);
  await page.waitForSelector('#sandbox-host:not([hidden])', { timeout: 5000 });
  const hostShown = await page.$$eval('#sandbox-host [data-layer]',
    (ss) => Object.fromEntries(ss.map((s) => [s.dataset.layer, { text: s.textContent, value: s.dataset.value }])));
  assert.deepEqual(hostShown, {
    landlock: { text: host.landlockAbi > 0 ? `ABI ${host.landlockAbi}` : 'unavailable', value: String(host.landlockAbi) },
    userns: { text: host.userns ? 'yes' : 'no', value: String(host.userns) },
    seccomp: { text: host.seccomp ? 'yes' : 'no', value: String(host.seccomp) },
    privatetmp: { text: host.privateTmp ? 'yes' : 'no', value: String(host.privateTmp) },
    // SP-7: the process bound, the spawner's own words.
    pids: { text: pids.state, value: String(pids.on === true) },
  });
  assert.equal(await page.isHidden('#agent-sandbox'), true, 'no "without a sandbox" notice');

  // ... and the layers each agent's runs get, as /api/agents says.
  await page.waitForSelector('#sandbox-wrap:not([hidden])', { timeout: 5000 });
  const agents = (await api('/api/agents')).agents;
  const shown = await sandboxRows(page);
  assert.deepEqual(shown.map((r) => r.agent).sort(), Object.keys(AGENTS).sort());
  for (const r of shown) {
    const a = agents.find((x) => x.name === r.agent);
    assert.ok(a?.sandbox, `${r.agent}: sandbox in /api/agents`);
    assert.equal(r.isolation, AGENTS[r.agent].isolation, `${r.agent} isolation`);
    assert.equal(r.network, AGENTS[r.agent].network, `${r.agent} network`);
    assert.equal(r.isolation, a.sandbox.isolation);
    assert.equal(r.network, a.sandbox.network);
    assert.deepEqual(r.layers, a.sandbox.layers, `${r.agent} layers`);
    assert.ok(r.layers.length > 0, `${r.agent}: some layer`);
    assert.equal(r.enforced, a.sandbox.enforced ? 'yes' : 'no', `${r.agent} enforced`);
    assert.equal(r.reason, a.sandbox.enforced ? '' : (a.sandbox.reason ?? ''), `${r.agent} reason`);
  }
  // network: none on a host with Landlock ABI >= 4 adds the TCP layer.
  if (host.landlockAbi >= 4) {
    assert.ok(shown.find((r) => r.agent === 'walled').layers.includes('landlock-net'));
    assert.ok(!shown.find((r) => r.agent === 'roomy').layers.includes('landlock-net'));
  }

  // PER-5/PER-6: the session cookie is HttpOnly and SameSite=Strict.
  const cookie = (await session.cookies(cordon.base)).find((c) => c.name === 'cordon_session');
  assert.ok(cookie, 'cordon_session cookie set');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.path, '/');
  const jsCookies = await page.evaluate(() => document.cookie);
  assert.ok(!jsCookies.includes('cordon_session'), `document.cookie exposes: ${jsCookies}`);

  // The stylesheet really applied under the CSP (no silent style block).
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(247, 247, 245)');

  // It keeps polling: "Updated" changes after one more period (2 s).
  const stamp = await page.textContent('#health-updated');
  await page.waitForFunction((s) => document.getElementById('health-updated').textContent !== s,
    stamp, { timeout: 6000 });
  assert.equal(await page.locator('#health-rows tr').count(), DAEMONS.length);

  await page.screenshot({ path: outPath('health.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: outPath('health-dark.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });

  assert.deepEqual(w.csp, [], 'CSP violations');
  assert.deepEqual(w.consoleErrors, [], 'console errors');
  assert.deepEqual(w.pageErrors, [], 'page errors');
  assert.deepEqual(w.failedRequests, [], 'failed requests');
  await page.close();
});

test('SBX-1..5: each agent card carries a sandbox badge', { timeout: T }, async () => {
  assert.ok(session, 'needs the signed-in context from the first test');
  const page = await session.newPage();
  try {
    await page.goto(`${cordon.base}/ui/#agents`, { waitUntil: 'load', timeout: 10000 });
    await page.waitForSelector('.agent-card[data-agent="walled"] .sandbox-badge', { timeout: 10000 });
    const agents = JSON.parse((await probe(page, `${cordon.base}/api/agents`, 'same-origin')).body).agents;
    for (const name of Object.keys(AGENTS)) {
      const sb = agents.find((a) => a.name === name).sandbox;
      const badge = page.locator(`.agent-card[data-agent="${name}"] .sandbox-badge`);
      const want = AGENTS[name].network === 'none' ? `${AGENTS[name].isolation}, no network` : AGENTS[name].isolation;
      assert.equal(await badge.textContent(), want, `${name} badge`);
      assert.equal(await badge.getAttribute('data-enforced'), String(sb.enforced === true), `${name} enforced`);
    }
  } finally {
    await page.close();
  }
});

test('DA-3: /ui/ without logging in shows "Not signed in" and no rows', { timeout: T }, async () => {
  const ctx = await browser.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 720 } });
  try {
    const w = await watch(ctx, { allow: [isApi401] });
    const page = await ctx.newPage();
    const apiStatus = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/api/health', { timeout: 10000 });
    const resp = await page.goto(`${cordon.base}/ui/#health`, { waitUntil: 'load', timeout: 10000 });
    assert.equal(resp.status(), 200);
    assert.equal((await apiStatus).status(), 401);

    await page.waitForSelector('#health-status[data-status="signed-out"]', { timeout: 10000 });
    assert.equal(await page.textContent('#health-status'), 'Not signed in');
    assert.equal(await page.isVisible('#health-notice'), true);
    assert.match(await page.textContent('#health-notice'), /^Not signed in — run cordon login on this machine and open the URL it prints\.$/);
    assert.equal(await page.locator('#health-rows tr').count(), 0);
    assert.equal(await page.textContent('#version'), '—');
    assert.equal(await page.isVisible('#agent-sandbox'), false);
    assert.equal(await page.isHidden('#sandbox-host'), true);
    assert.equal(await page.isHidden('#sandbox-wrap'), true);
    assert.equal(await page.locator('#sandbox-rows tr').count(), 0);
    assert.equal((await ctx.cookies(cordon.base)).length, 0, 'no cookie without login');
    await page.screenshot({ path: outPath('signed-out.png'), fullPage: true });

    assert.deepEqual(w.csp, [], 'CSP violations');
    assert.deepEqual(w.consoleErrors, [], 'console errors');
    assert.deepEqual(w.pageErrors, [], 'page errors');
    assert.ok(w.allowed.length >= 1, 'the 401 was seen by the console');
  } finally {
    await ctx.close();
  }
});

test('PER-6: the page CSP blocks an injected inline script (collector sanity)', { timeout: T }, async () => {
  const ctx = await browser.newContext({ colorScheme: 'light' });
  try {
    const w = await watch(ctx, { allow: [isApi401] });
    const page = await ctx.newPage();
    await page.goto(`${cordon.base}/ui/`, { waitUntil: 'load', timeout: 10000 });
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.head.append(s);
      const st = document.createElement('style');
      st.textContent = 'body { background: rgb(1, 2, 3) }';
      document.head.append(st);
    });
    await page.waitForFunction(() => window.__cspViolations.length >= 2, null, { timeout: 5000 });
    assert.equal(await page.evaluate(() => window.__inlineRan), undefined, 'inline script ran');
    assert.notEqual(await page.evaluate(() => getComputedStyle(document.body).backgroundColor),
      'rgb(1, 2, 3)', 'inline style applied');
    const dirs = w.csp.filter((v) => v.directive).map((v) => v.directive).sort();
    assert.deepEqual(dirs, ['script-src-elem', 'style-src-elem']);
    assert.deepEqual(w.pageErrors, []);
  } finally {
    await ctx.close();
  }
});

// The per-agent sandbox table as plain data.
function sandboxRows(page) {
  return page.$$eval('#sandbox-rows tr', (trs) => trs.map((tr) => ({
    agent: tr.dataset.agent,
    isolation: tr.querySelector('.isolation').textContent,
    network: tr.querySelector('.network').textContent,
    layers: [...tr.querySelectorAll('.layers .layer')].map((l) => l.textContent),
    enforced: tr.querySelector('.enforced').firstChild?.textContent ?? '',
    reason: tr.querySelector('.enforced .sandbox-reason')?.textContent ?? '',
  })));
}

// Fetch `url` from `page` and report what the page could see; a page of
// the dashboard's origin adds the page key it holds (PER-5), any other
// has none to add.
function probe(page, url, mode) {
  return page.evaluate(async ([u, m]) => {
    let key = null;
    try {
      key = localStorage.getItem('cordon.pageKey'); // throws on about:blank, data:
    } catch {
      key = null;
    }
    try {
      const headers = key ? { 'X-Cordon-Page': key } : {};
      const r = await fetch(u, { credentials: 'include', mode: m, cache: 'no-store', headers });
      const body = await r.text();
      return { fetched: true, type: r.type, status: r.status, body };
    } catch (e) {
      return { fetched: false, error: String(e) };
    }
  }, [url, mode]);
}

test('PER-4: a page on another origin cannot read /api/health even with the session cookie', { timeout: T }, async () => {
  assert.ok(session, 'needs the signed-in context from the first test');
  const api = `${cordon.base}/api/health`;

  // Control: from the dashboard's own origin the same browser can read it.
  const own = await session.newPage();
  await own.goto(`${cordon.base}/ui/#health`, { waitUntil: 'load', timeout: 10000 });
  const ok = await probe(own, api, 'same-origin');
  assert.equal(ok.status, 200);
  assert.equal(JSON.parse(ok.body).ok, true);
  await own.close();

  // A second origin on loopback (other port): a local page an attacker runs.
  const evil = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html', 'Cache-Control': 'no-store' });
    res.end('<!doctype html><title>other origin</title><p>other origin</p>');
  });
  await new Promise((r) => evil.listen(0, '127.0.0.1', r));
  try {
    const other = `http://127.0.0.1:${evil.address().port}`;
    const cases = [
      ['about:blank', null],
      ['data:', 'data:text/html,<title>data</title>'],
      ['other port', `${other}/`],
    ];
    for (const [label, url] of cases) {
      const page = await session.newPage();
      if (url) await page.goto(url, { waitUntil: 'load', timeout: 10000 });
      const wire = await wireLog(session, page, api);

      const cors = await probe(page, api, 'cors');
      assert.equal(cors.fetched, false, `${label}: cors fetch must fail, got ${JSON.stringify(cors)}`);
      assert.match(cors.error, /TypeError/, label);

      const opaque = await probe(page, api, 'no-cors');
      if (opaque.fetched) {
        assert.equal(opaque.type, 'opaque', label);
        assert.equal(opaque.body, '', `${label}: no-cors body must be unreadable`);
      }

      // Let the CDP extra-info events land (they may trail the rejection).
      const until = Date.now() + 3000;
      while (wire.entries().some((e) => e.status === null && e.error === null) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
      const sent = wire.entries();
      wire.detach();
      await page.close();
      perimeterLog.push({ label, sent });

      // Whatever reached cordon, cordon itself refused (PER-4 Origin check).
      for (const e of sent.filter((x) => x.status !== null))
        assert.equal(e.status, 403, `${label}: cordon answered ${e.status} (${JSON.stringify(e)})`);
      if (label === 'other port') {
        const reached = sent.filter((x) => x.status !== null);
        assert.equal(reached.length, 2, `loopback requests reached cordon: ${JSON.stringify(sent)}`);
        // Same site (ports do not count), so the Strict cookie rode along:
        // the refusal is cordon's Origin check, not the browser.
        assert.ok(reached.every((e) => e.cookie), 'session cookie was sent');
        // cors mode carries Origin (PER-4 Origin check); no-cors GET does
        // not, and is refused on Sec-Fetch-Site instead.
        assert.equal(reached[0].origin, other, 'Origin header of the cors fetch');
        assert.ok(reached.every((e) => e.secFetchSite === 'same-site'), 'Sec-Fetch-Site');
      }
    }
  } finally {
    await new Promise((r) => evil.close(r));
    if (process.env.CORDON_BROWSER_VERBOSE)
      console.log(JSON.stringify(perimeterLog, null, 1));
  }
});

test('cordon stops cleanly on SIGTERM (exit 0, no daemons left)', { timeout: T }, async () => {
  await session?.close();
  const st = await cordon.stop({ timeoutMs: 15000 });
  assert.deepEqual({ code: st.code, signal: st.signal }, { code: 0, signal: null },
    `cordon stderr:\n${cordon.output().stderr}`);
  assert.deepEqual(st.leftovers, [], 'daemons still alive 3 s after cordon exited');
});
