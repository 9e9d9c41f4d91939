// The dashboard's egress views against the scripted API (contract.mjs,
// egress on): the agents list shows a `network: proxy` agent's mode and
// allowlist (EG-1, EG-2), and the run view lists the run's connections
// live, as they open and end (EG-4): host, port, decision, bytes,
// duration, never an unlisted name.  At 1280 px and at 390 px, each
// checked by axe-core (WCAG 2 A/AA).  127.0.0.1 only.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { launchBrowser, watch, withTimeout, outPath } from './harness.mjs';
import { startContract } from './contract.mjs';

const T = 30000;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let srv;
let browser;

before(async () => {
  srv = await startContract({ egress: true });
  browser = await launchBrowser();
}, { timeout: T });

after(async () => {
  await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium').catch(() => {});
  await srv?.close();
}, { timeout: T });

// axe-core's WCAG 2 A/AA violations in what the page shows now.
async function axe(page, include) {
  await page.evaluate(AXE); // devtools evaluation: the page's CSP stays on
  const r = await page.evaluate((sel) => globalThis.axe.run(
    { include: [sel] }, { runOnly: ['wcag2a', 'wcag2aa'], resultTypes: ['violations'] }), include);
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const fits = (page) => page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);

for (const width of [1280, 390]) {
  test(`EG-1/EG-2: the agents list shows network mode and allowlist (${width} px)`, { timeout: T }, async () => {
    const ctx = await browser.newContext({ viewport: { width, height: 844 } });
    const w = await watch(ctx);
    const page = await ctx.newPage();
    await page.goto(`${srv.base}/ui/#agents`, { waitUntil: 'load' });
    await page.waitForSelector('.agent-card[data-agent="demo"] .network');
    const net = page.locator('.agent-card[data-agent="demo"] .network');
    assert.equal(await net.getAttribute('data-network'), 'proxy');
    assert.equal(await net.locator('.network-mode').textContent(), 'proxy, allowlist only');
    assert.deepEqual(await net.locator('.allowlist li').allTextContents(),
      ['api.anthropic.com:443', '*.example-long-subdomain-name.org:8443']);
    assert.equal(await net.locator('.allowlist').getAttribute('aria-label'), 'Allowed hosts');
    // An agent without a sandbox report shows no network fact at all.
    assert.equal(await page.locator('.agent-card[data-agent="fresh"] .network').count(), 0);
    assert.ok(await fits(page), 'no horizontal overflow');
    assert.deepEqual(await axe(page, '#view-dynamic'), []);
    await page.screenshot({ path: outPath(`egress-agents-${width}.png`), fullPage: true });
    assert.deepEqual([...w.csp, ...w.consoleErrors, ...w.pageErrors], []);
    await ctx.close();
  });

  test(`EG-4: the run view lists its connections live (${width} px)`, { timeout: T }, async () => {
    const ctx = await browser.newContext({ viewport: { width, height: 844 } });
    const w = await watch(ctx);
    const page = await ctx.newPage();
    await page.goto(`${srv.base}/ui/#agent/demo`, { waitUntil: 'load' });
    await page.waitForSelector('#prompt');
    await page.fill('#prompt', 'fetch over the net');
    await page.click('button.send');
    // Live: the held connection shows as open while the run streams.
    const rows = page.locator('.msg-agent[data-state="running"] .egress-conns tbody tr');
    await page.waitForFunction(() => document.querySelectorAll(
      '.msg-agent[data-state="running"] .egress-conns tbody tr').length === 2, null, { timeout: 10000 });
    const cells = async (i) => rows.nth(i).locator('td').allTextContents();
    assert.deepEqual(await cells(0), ['(unlisted host)', 'denied: host-not-allowed', '0 B', '0 B', '1 ms']);
    assert.equal(await rows.nth(1).getAttribute('data-state'), 'open');
    assert.deepEqual(await cells(1), ['api.anthropic.com:443', 'open', '…', '…', '…']);
    assert.equal(await page.textContent('.egress-conns caption'), 'Network connections (2)');
    assert.ok(await fits(page), 'no horizontal overflow while open');
    assert.deepEqual(await axe(page, '.chat-log'), []);
    srv.releaseConn();
    await page.waitForSelector('.msg-agent[data-state="done"] .egress-conns tr[data-conn="2"][data-state="end"]',
      { timeout: 10000 });
    const done = page.locator('.msg-agent[data-state="done"] .egress-conns tbody tr');
    assert.equal(await done.count(), 2, 'one row per connection, updated in place');
    const [host, decision, up, down, ms] = await done.nth(1).locator('td').allTextContents();
    assert.equal(host, 'api.anthropic.com:443');
    assert.equal(decision, 'allowed, closed');
    assert.match(up, /^2(\.0)? KiB$/);
    assert.match(down, /^1\.\d+ MiB$/);
    assert.match(ms, /^2\.\d+ s$/);
    assert.equal(await done.nth(1).locator('td.conn-decision').getAttribute('data-value'), 'allow');
    assert.ok(await fits(page), 'no horizontal overflow');
    assert.deepEqual(await axe(page, '.chat-log'), []);
    await page.screenshot({ path: outPath(`egress-run-${width}.png`), fullPage: true });
    assert.deepEqual([...w.csp, ...w.consoleErrors, ...w.pageErrors], []);
    await ctx.close();
  });
}
