// The operator's first hour (DA-1, DA-3, PER-5, PER-6, API-2), against a
// real `cordon run --demo` plus an agent whose program is missing: the
// dashboard lands on Agents with a first-run hint, Health counts the
// agents that are not live with the reason, the demo agent has Control
// Room actions, an agent without any says so once, every view fits a
// phone (390×844) without horizontal overflow, no request for a missing
// favicon, a used login link gets a page naming `cordon login`, long work
// (chats, actions, missions) shows its elapsed time, and a chat note's
// title cut from a long prompt ends at a word with "…".

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { HERE, startCordon, launchBrowser, watch } from './harness.mjs';

const T = 60000;
const BROKEN = `name: broken
displayName: Broken agent
transport: subprocess
transportConfig:
  bin: /nonexistent/cordon-test/agent
  args: ["{prompt}"]
`;
// A mission that takes a few seconds, on the fake hermes agent.
const HERMES = `name: hermes
displayName: Hermes
transport: subprocess
transportConfig:
  bin: ${path.resolve(HERE, '../fake-agents/hermes')}
  args: ["-z", "{prompt}"]
  timeoutMs: 30000
`;
const SLOW = `id: t-slow
label: Slow
agent: hermes
prompt: "sleep 8"
outputs:
  - {type: event, event: slow.done}
permissions: [event-emit]
trigger: {manual: true}
timeoutMs: 30000
`;

let cordon;
let browser;
let ctx;
let w;
let page;

before(async () => {
  cordon = await startCordon({
    demo: true,
    files: { 'agents/broken.yaml': BROKEN, 'agents/hermes.yaml': HERMES, 'missions/t-slow.yaml': SLOW },
  });
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 390, height: 844 } });
  w = await watch(ctx, { allow: [(m) => /status of 401/.test(m.text()) && /\/ui\/login/.test(m.location()?.url || '')] });
  page = await ctx.newPage();
  await page.goto(cordon.loginUrl);
});

after(async () => {
  await browser?.close();
  await cordon?.kill();
});

test('DA-1: the login lands on Agents with a first-run hint', { timeout: T }, async () => {
  await page.waitForSelector('#view-dynamic[data-view="agents"] .first-run');
  assert.equal(new URL(page.url()).pathname, '/ui/');
  assert.match(await page.textContent('.first-run'), /Open an agent’s room/);
  assert.equal(await page.getAttribute('#nav a[data-view="agents"]', 'aria-current'), 'page');
});

test('API-2/DA-1: an agent that is not live says why, on its card and in Health', { timeout: T }, async () => {
  await page.waitForSelector('.agent-card[data-agent="broken"] .not-live', { timeout: 20000 });
  assert.match(await page.textContent('.agent-card[data-agent="broken"] .not-live'),
    /its program was not found/);
  await page.evaluate(() => { location.hash = 'health'; });
  await page.waitForSelector('#health-offline li[data-agent="broken"]');
  assert.match(await page.textContent('#health-agents'), /^3 agents, 1 not live$/);
  assert.match(await page.textContent('#health-offline li[data-agent="broken"]'),
    /broken offline: its program was not found/);
});

test('DA-1: the demo agent has actions that run; no actions is said once', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('.control .chip[data-action="version"]');
  assert.equal(await page.locator('.control .chip').count(), 3);
  await page.click('.control .chip[data-action="version"]');
  await page.waitForSelector('.viewer[data-state="ok"]');
  assert.match(await page.textContent('.viewer .stdout'), /cordon-demo-agent/);
  await page.evaluate(() => { location.hash = 'agent/broken'; });
  await page.waitForSelector('.control .muted');
  assert.equal(await page.textContent('.control .muted'), 'This agent declares no actions.');
  assert.equal(await page.locator('.control .viewer-empty').count(), 0);
});

test('DA-1: every view fits a 390 px phone screen', { timeout: T }, async () => {
  const views = ['agents', 'agent/demo', 'vault', 'missions', 'activity', 'approvals', 'health'];
  const wide = [];
  for (const v of views) {
    await page.evaluate((h) => { location.hash = h; }, v);
    await page.waitForFunction((name) => {
      const d = document.getElementById('view-dynamic');
      return name === 'health' ? !document.getElementById('view-health').hidden :
        d.dataset.view === name.split('/')[0] && !d.querySelector('.panel.loading, [data-state="loading"]');
    }, v);
    await page.waitForTimeout(300); // data painted
    const m = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, iw: innerWidth }));
    if (m.sw > m.iw) wide.push(`${v}: ${m.sw} > ${m.iw}`);
    if (v === "activity") {
      const off = await page.evaluate(() => [...document.querySelectorAll(".records td.details")].filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5).length);
      if (off) wide.push(`activity: ${off} details cells off-screen`);
    }
  }
  assert.deepEqual(wide, []);
});

test('PER-5: a used login link gets a page naming cordon login', { timeout: T }, async () => {
  const p2 = await ctx.newPage();
  const r = await p2.goto(cordon.loginUrl);
  assert.equal(r.status(), 401);
  assert.match(await p2.textContent('main'), /cordon login/);
  assert.equal(await p2.locator('a[href="/ui/"]').count(), 1);
  await p2.close();
});

test('DA-1: a running chat and action show elapsed time; Stop says "stopping…"', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('#prompt');
  // Hold the stream open: the answer's pill counts while the run is live.
  await page.route('**/api/agents/demo/run', async () => {}); // never answered
  await page.fill('#prompt', 'count the seconds');
  await page.click('button.send');
  await page.waitForFunction(() => /^streaming… [1-9]\d* s$/.test(
    document.querySelector('.msg-agent[data-state="running"] .msg-meta .pill')?.textContent || ''),
  null, { timeout: 10000 });
  await page.click('button.stop');
  // Without a run id the page waits STOP_GRACE_MS (6 s) before closing.
  await page.waitForFunction(() => /^stopping… \d+ s$/.test(
    document.querySelector('.msg-agent[data-state="running"] .msg-meta .pill')?.textContent || ''),
  null, { timeout: 5000 });
  await page.unroute('**/api/agents/demo/run');
  await page.waitForSelector('.msg-agent:last-child[data-state="stopped"]', { timeout: 15000 });
  await page.route('**/api/agents/demo/actions/version', async (r) => {
    await new Promise((res) => setTimeout(res, 2500));
    await r.continue();
  });
  await page.click('.control .chip[data-action="version"]');
  await page.waitForFunction(() => /^running… [1-9]\d* s$/.test(
    document.querySelector('.viewer .elapsed')?.textContent || ''), null, { timeout: 10000 });
  await page.waitForSelector('.viewer[data-state="ok"]', { timeout: 15000 });
  await page.unroute('**/api/agents/demo/actions/version');
});

test('DA-1/API-7: a running mission counts its elapsed time, also on a page opened during the run', { timeout: T }, async () => {
  const c = '.mission-card[data-mission="t-slow"]';
  await page.evaluate(() => { location.hash = 'missions'; });
  await page.waitForSelector(`${c} button.run-mission:not([disabled])`, { timeout: 10000 });
  await page.click(`${c} button.run-mission`);
  await page.waitForFunction((sel) => /^running… [2-9] s$/.test(
    document.querySelector(`${sel} .run-elapsed`)?.textContent || ''), c, { timeout: 10000 });
  // No route stops a mission run; the page says so instead of a Stop.
  assert.match(await page.textContent(`${c} .mission-nostop`), /cannot be stopped/);
  assert.equal(await page.locator(`${c} button.stop`).count(), 0);
  // A page opened now counts from the spawner's elapsedMs, not from zero.
  const p2 = await ctx.newPage();
  await p2.goto(`${cordon.base}/ui/#missions`);
  await p2.waitForSelector(`${c} .running-pill:not([hidden])`, { timeout: 10000 });
  assert.match(await p2.textContent(`${c} .running-pill`), /^running (?:[2-9]|[1-5]\d) s$/);
  assert.equal(await p2.isDisabled(`${c} button.run-mission`), true);
  await p2.close();
  await page.waitForSelector(`${c} .mission-result[data-state="done"] .run-facts[data-status="success"]`,
    { timeout: 30000 });
  assert.equal(await page.isHidden(`${c} .running-pill`), true);
});

test('DA-1/VA-5: a chat note\'s title cut from a long prompt ends at a word, with "…"', { timeout: T }, async () => {
  const prompt = 'Summarise the operator\'s first hour with cordon on a fresh machine, and what breaks';
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('#prompt');
  await page.fill('#prompt', prompt);
  await page.click('button.send');
  await page.waitForSelector('.msg-agent:last-child[data-state="done"] a.saved-link', { timeout: 20000 });
  await page.click('.msg-agent:last-child a.saved-link');
  await page.waitForSelector('.reader[data-state="ok"] .md h3', { timeout: 10000 });
  // The note's own title is the prompt's first 60 characters ("… fresh m").
  assert.equal(await page.textContent('.reader .md h3'),
    'Summarise the operator\'s first hour with cordon on a fresh…');
});

test('DA-3/PER-6: no CSP violation, no console error (no favicon 404)', { timeout: T }, async () => {
  assert.deepEqual(w.csp, []);
  assert.deepEqual(w.pageErrors, []);
  assert.deepEqual(w.consoleErrors, []);
});
