// The Jobs view (DA-1, MC-3) in headless Chromium against a real
// `cordon run --demo` with the fake hermes agent: detached jobs started
// through the API, listed newest first with their state, one opened with
// its events rendered as the chat view renders a run (text, meta, saved
// note), a running one cancelled from the page, a hostile output shown as
// text only, a 390 px phone screen without horizontal overflow, axe-core
// finding no WCAG A/AA violation, and no CSP violation or console error.
// Talks to 127.0.0.1 only; touches only temp dirs.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  startCordon, launchBrowser, watch, outPath, HERE,
} from './harness.mjs';

const T = 60000;
const HOSTILE = '<img src=x onerror=window.__pwned=1>';
const HERMES = `name: hermes
displayName: Hermes
transport: subprocess
transportConfig:
  bin: ${path.resolve(HERE, '../fake-agents/hermes')}
  args: ["-z", "{prompt}"]
  timeoutMs: 30000
`;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let cordon;
let token;
let browser;
let ctx;
let w;
let page;

async function api(method, url, body) {
  const r = await fetch(`${cordon.base}${url}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, json: await r.json() };
}

async function startJob(agent, prompt) {
  const r = await api('POST', `/api/agents/${agent}/jobs`, { prompt });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.jobId;
}

async function waitJob(id) {
  const r = await api('GET', `/api/jobs/${id}/wait?timeoutMs=20000`);
  assert.equal(r.status, 200);
  return r.json.job;
}

// axe-core, evaluated by the test (not the page: the CSP allows no
// script of ours), on the view as it stands.
async function axeViolations() {
  await page.evaluate(`${AXE}\n;0`);
  const res = await page.evaluate(() => window.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
  }));
  return res.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function show(hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForFunction(() => {
    const d = document.getElementById('view-dynamic');
    return d.dataset.view === 'jobs' && d.dataset.state === 'ok';
  });
}

before(async () => {
  cordon = await startCordon({ demo: true, files: { 'agents/hermes.yaml': HERMES } });
  token = readFileSync(path.join(cordon.home, 'run', 'token'), 'utf8').trim();
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  w = await watch(ctx);
  page = await ctx.newPage();
  await page.goto(cordon.loginUrl);
  await page.waitForSelector('#nav a[data-view="jobs"]');
});

after(async () => {
  await browser?.close();
  await cordon?.kill();
});

test('DA-1/MC-3: no jobs yet says how to start one', { timeout: T }, async () => {
  await page.click('#nav a[data-view="jobs"]');
  await show('jobs');
  assert.equal(await page.getAttribute('#nav a[data-view="jobs"]', 'aria-current'), 'page');
  assert.match(await page.textContent('#view-dynamic .panel'), /No jobs yet.*start_job/);
});

test('DA-1/MC-3: jobs are listed newest first and one opens like a chat', { timeout: T }, async () => {
  const first = await startJob('demo', 'a detached question');
  assert.equal((await waitJob(first)).state, 'succeeded');
  const second = await startJob('hermes', 'hello');
  assert.equal((await waitJob(second)).state, 'succeeded');
  await show('jobs');
  await page.waitForFunction((n) => document.querySelectorAll('#jobs-rows tr').length === n, 2);
  const rows = await page.$$eval('#jobs-rows tr', (trs) => trs.map((t) => [t.dataset.job, t.dataset.state]));
  assert.deepEqual(rows, [[second, 'succeeded'], [first, 'succeeded']]);
  await page.click(`#jobs-rows tr[data-job="${first}"] a.job-link`);
  await page.waitForFunction(() => document.getElementById('view-dynamic').dataset.jobState === 'succeeded');
  assert.equal(new URL(page.url()).hash, `#jobs/${first}`);
  const text = await page.textContent('.job-log .msg-agent .msg-text');
  assert.match(text, /Hello from the cordon demo agent\.[\s\S]*no shell\./);
  assert.doesNotMatch(text, /\x1b/); // SP-10: cleaned before it was kept
  assert.match(await page.textContent('.job-log .msg-meta'), /exit 0/);
  assert.match(await page.textContent('.job-meta'), /demo/);
  assert.equal(await page.isHidden('button.cancel-job'), true);
});

test('DA-1/MC-3: a running job is cancelled from its page', { timeout: T }, async () => {
  const id = await startJob('hermes', 'sleep 30');
  await show(`jobs/${id}`);
  // Its output so far, read on while it runs.
  await page.waitForFunction(() => document.getElementById('view-dynamic').dataset.jobState === 'running' &&
    /sleeping/.test(document.querySelector('.job-log .msg-text')?.textContent || ''), null, { timeout: 15000 });
  assert.equal(await page.isVisible('button.cancel-job'), true);
  await page.click('button.cancel-job');
  await page.waitForFunction(() => document.getElementById('view-dynamic').dataset.jobState === 'cancelled',
    null, { timeout: 15000 });
  assert.match(await page.textContent('.job-meta'), /Cancelled\s*on request/);
  assert.match(await page.textContent('.job-log .msg-meta'), /stopped/);
  assert.equal(await page.isHidden('button.cancel-job'), true);
});

// Stop all cancels the runs this page started, never a detached job: the
// button, its answer and the Jobs view say so, and the job runs on.
test('DA-1/MC-3: Stop all leaves detached jobs, and says where they stop', { timeout: T }, async () => {
  const id = await startJob('hermes', 'sleep 30');
  await show('jobs');
  assert.match(await page.textContent('#view-dynamic .jobs-stop-hint'),
    /Stop all does not stop detached jobs/);
  assert.match(await page.getAttribute('#stop-all', 'title'), /Detached jobs are not stopped.*Jobs view/);
  // No run of this page: nothing for Stop all, the job included.
  assert.equal(await page.isDisabled('#stop-all'), true);
  await page.$eval('#stop-all', (b) => { b.disabled = false; b.click(); });
  await page.waitForFunction(() => /Jobs view/.test(document.getElementById('stop-all-status').textContent));
  assert.match(await page.textContent('#stop-all-status'), /^No run to stop\. Detached jobs go on/);
  const r = await api('GET', `/api/jobs/${id}`);
  assert.equal(r.json.job.state, 'running');
  assert.equal((await api('POST', `/api/jobs/${id}/cancel`)).status, 200);
  assert.equal((await waitJob(id)).state, 'cancelled');
});

test('MC-3/PER-6: a job\'s hostile output is text, never markup', { timeout: T }, async () => {
  const id = await startJob('hermes', HOSTILE);
  await waitJob(id);
  await show(`jobs/${id}`);
  await page.waitForFunction(() => document.getElementById('view-dynamic').dataset.jobState === 'succeeded');
  assert.ok((await page.textContent('.job-log .msg-text')).includes(HOSTILE));
  assert.equal(await page.locator('.job-log img').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
});

test('DA-1: the Jobs views fit a 390 px phone and axe finds no violation', { timeout: T }, async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  const jobs = (await api('GET', '/api/jobs')).json.jobs;
  const wide = [];
  const found = [];
  for (const v of ['jobs', `jobs/${jobs[jobs.length - 1].jobId}`]) {
    await show(v);
    await page.waitForTimeout(200);
    const m = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, iw: innerWidth }));
    if (m.sw > m.iw) wide.push(`${v}: ${m.sw} > ${m.iw}`);
    for (const x of await axeViolations()) found.push(`${v}: ${x}`);
  }
  await page.screenshot({ path: outPath('jobs-390.png'), fullPage: true });
  assert.deepEqual(wide, []);
  assert.deepEqual(found, []);
  assert.deepEqual(w.csp, []);
  assert.deepEqual(w.consoleErrors, []);
  assert.deepEqual(w.pageErrors, []);
});
