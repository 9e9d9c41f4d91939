// Approvals (SBX-7) in the cordon dashboard, headless Chromium against a
// real `cordon run --home`: a fake agent (tests/fake-agents/gatebot) calls
// `cordon gate` as a Claude Code PreToolUse hook; a `git push` is held by
// the gate's `ask` rule until the operator answers in the browser.
// Covers the banner and nav count on every page, the card (agent, command
// name, rule, cwd, scrubbed args as text only), the countdown, Allow, Deny,
// the timeout, keyboard use, a long command line on a 390 px phone screen,
// and zero CSP violations or console errors.
// Talks to 127.0.0.1 only; touches only temp dirs it creates.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  BUILD, HERE, startCordon, launchBrowser, watch, outPath, withTimeout, pageKeyHeaders,
} from './harness.mjs';
import { startContract } from './contract.mjs';

const T = 60000;
const GATEBOT = path.resolve(HERE, '../fake-agents/gatebot');
// A GitHub-token-shaped fake: the spawner's redactor must scrub it.
const FAKE_TOKEN = `ghp_${'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'}`;
// Markup in the arguments: must arrive as text and never become an element.
const HOSTILE = '<img src=x onerror=window.__pwned=1>';

function manifest(name, ws, extra = '') {
  return `name: ${name}
displayName: Gate bot ${name}
transport: subprocess
transportConfig:
  bin: ${GATEBOT}
  args: ["-p", "{prompt}"]
  cwd: ${ws}
  timeoutMs: 60000
  env:
    CORDON_BIN: ${path.join(BUILD, 'cordon')}
${extra}`;
}

// ---- the page's own logic, against the scripted API (contract.mjs) ----------

describe('against a scripted API', () => {
  const HOUR = 3600000;
  let srv;
  let browser;
  let ctx;
  let w;
  let page;

  const held = (id, extra = {}) => {
    const now = Date.now() - HOUR; // the server's clock (skewMs below)
    return {
      id, agent: 'demo', runId: 'r-1', verb: 'rm', rule: 'ask-rm-recursive', cwd: 'sub/dir',
      args: 'rm -r build <b>x</b>', created: now, expires: now + 30000, ...extra,
    };
  };

  before(async () => {
    // The server's clock runs an hour behind the browser's: countdowns must
    // come from the server's `now`, not from Date.now() in the page.
    srv = await startContract({ skewMs: -HOUR });
    browser = await launchBrowser();
    ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    w = await watch(ctx);
    page = await ctx.newPage();
    await page.goto(`${srv.base}/ui/#agents`, { waitUntil: 'load' });
    await page.waitForSelector('.agent-card');
  }, { timeout: T });

  after(async () => {
    await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium').catch(() => {});
    await srv?.close();
  }, { timeout: T });

  test('banner and nav count on every page; malformed entries ignored', { timeout: T }, async () => {
    srv.approvals.push(held('00000000000000a1'), held('00000000000000a2', { verb: 'curl', rule: 'ask-host' }),
      { ...held('not-an-id') }, { ...held('00000000000000a3'), expires: 'soon' });
    await page.waitForSelector('#approvals-banner:not([hidden])', { timeout: 10000 });
    assert.equal((await page.textContent('#approvals-banner')).trim(), '2 commands wait for your approval →');
    assert.equal(await page.textContent('#approvals-count'), '2');
    await page.click('#approvals-banner-link');
    await page.waitForSelector('.approval-card[data-id="00000000000000a2"]', { timeout: 5000 });
    assert.equal(await page.locator('.approval-card').count(), 2);
    assert.equal(await page.textContent('.approval-card[data-id="00000000000000a1"] .cwd'), 'sub/dir');
    assert.equal(await page.locator('.approval-card .args b').count(), 0, 'args are text');
    assert.equal(await page.textContent('.approval-card[data-id="00000000000000a1"] .args'), 'rm -r build <b>x</b>');
  });

  test('the countdown runs on the server clock (an hour of skew changes nothing)', { timeout: T }, async () => {
    const c = page.locator('.approval-card[data-id="00000000000000a1"] .countdown');
    const ms = Number(await c.getAttribute('data-remaining'));
    assert.ok(ms > 15000 && ms <= 30000, `remaining ${ms} ms`);
    assert.match(await c.textContent(), /^\d\d s left$/);
    assert.equal(await page.getAttribute('.approval-card[data-id="00000000000000a1"]', 'data-state'), 'held');
  });

  test('Allow and Deny answer the server and remove the card; a stale one says so', { timeout: T }, async () => {
    await page.click('.approval-card[data-id="00000000000000a1"] button.allow');
    await page.waitForSelector('.approval-card[data-id="00000000000000a1"]', { state: 'detached', timeout: 5000 });
    srv.stale.add('00000000000000a2');
    await page.click('.approval-card[data-id="00000000000000a2"] button.deny');
    await page.waitForSelector('.approval-card[data-id="00000000000000a2"][data-state="gone"]', { timeout: 5000 });
    assert.match(await page.textContent('.approval-card[data-id="00000000000000a2"] .approval-note'), /No longer waiting/);
    // Gone from the banner at once; the card goes when the server drops it.
    await page.waitForSelector('#approvals-banner[hidden]', { state: 'attached', timeout: 5000 });
    srv.approvals.splice(0, srv.approvals.length);
    await page.waitForSelector('.approvals-empty', { timeout: 5000 });
    assert.deepEqual(srv.decisions, [['00000000000000a1', 'allow']]);
  });

  test('a command past its time shows "timed out — denied" until the server drops it', { timeout: T }, async () => {
    const now = Date.now() - HOUR;
    srv.approvals.push(held('00000000000000b1', { created: now - 60000, expires: now - 10 }));
    const card = '.approval-card[data-id="00000000000000b1"]';
    await page.waitForSelector(`${card}[data-state="timed-out"]`, { timeout: 5000 });
    assert.equal(await page.textContent(`${card} .countdown`), 'timed out — denied');
    assert.equal(await page.isDisabled(`${card} button.allow`), true);
    assert.equal(await page.isDisabled(`${card} button.deny`), true);
    assert.equal(await page.isHidden('#approvals-banner'), true, 'a timed-out command does not wait');
    srv.approvals.splice(0, srv.approvals.length);
    await page.waitForSelector(card, { state: 'detached', timeout: 5000 });
  });

  test('no CSP violation, no unexpected console error', { timeout: T }, async () => {
    // The one expected: the deliberate 404 for the stale approval.
    const errs = w.consoleErrors.filter((e) => !/status of 404.*\/api\/approvals\/00000000000000a2/.test(e));
    assert.deepEqual(w.csp, []);
    assert.deepEqual(errs, []);
    assert.deepEqual(w.pageErrors, []);
  });
});

// ---- a real cordon ---------------------------------------------------------

describe('against a real cordon', () => {
  let ws;
  let cordon;
  let browser;
  let ctx;
  let w;
  let page; // the Approvals view
  let other; // a second page on another view: the banner

  before(async () => {
    ws = mkdtempSync(path.join(tmpdir(), 'cordon-browser-ws-'));
    mkdirSync(path.join(ws, 'sub'));
    cordon = await startCordon({
      files: {
        'agents/gatebot.yaml': manifest('gatebot', ws),
        'agents/gatequick.yaml': manifest('gatequick', ws, 'commands:\n  askTimeoutSec: 5\n'),
      },
    });
    browser = await launchBrowser();
    ctx = await browser.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 800 } });
    w = await watch(ctx);
    page = await ctx.newPage();
    await page.goto(cordon.loginUrl, { waitUntil: 'load', timeout: 10000 });
    assert.equal(new URL(page.url()).pathname, '/ui/');
    other = await ctx.newPage();
    await other.goto(`${cordon.base}/ui/#agents`, { waitUntil: 'load', timeout: 10000 });
  }, { timeout: T });

  after(async () => {
    await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium').catch(() => {});
    await cordon?.kill();
    if (ws) rmSync(ws, { recursive: true, force: true });
  }, { timeout: T });

  // Start a gatebot run from a dashboard page (same origin, the page's own
  // cookie, page key and Referer) and hand back a promise of its NDJSON events.
  function startRun(agent, calls) {
    return other.evaluate(async ([a, prompt]) => {
      const r = await fetch(`/api/agents/${a}/run`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'X-Cordon-Page': localStorage.getItem('cordon.pageKey'),
        },
        body: JSON.stringify({ prompt }),
      });
      const text = await r.text();
      return { status: r.status, events: text.split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
    }, [agent, JSON.stringify(calls)]);
  }

  // The gatebot's per-call lines ({i, exit, stdout, stderr}) by index.
  async function results(run) {
    const r = await withTimeout(run, 30000, 'waiting for the run to end');
    assert.equal(r.status, 200, JSON.stringify(r));
    const text = r.events.filter((e) => e.kind === 'token').map((e) => e.text).join('');
    const out = {};
    for (const ln of text.split('\n').filter(Boolean)) {
      const o = JSON.parse(ln);
      if ('i' in o) out[o.i] = o;
    }
    return out;
  }

  async function verbRuns() {
    const r = await ctx.request.get(`${cordon.base}/api/audit?kind=verb.run&limit=1000`,
      { headers: await pageKeyHeaders(page) });
    assert.equal(r.status(), 200);
    return (await r.json()).records;
  }

  async function waitAudit(pred, what) {
    const until = Date.now() + 10000;
    for (;;) {
      const hit = (await verbRuns()).filter(pred);
      if (hit.length) return hit;
      assert.ok(Date.now() < until, `no audit record: ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function go(p, hash) {
    await p.evaluate((h) => { location.hash = h; }, hash);
    await p.waitForFunction((h) => document.getElementById('view-dynamic').dataset.view === h,
      hash, { timeout: 5000 });
  }

  const cards = () => page.locator('.approval-card');

  test('SBX-7: nothing waits — no banner, no count, the empty panel', { timeout: T }, async () => {
    await go(page, 'approvals');
    await page.waitForSelector('.approvals-body[data-state="ok"] .approvals-empty', { timeout: 10000 });
    assert.equal(await page.isHidden('#approvals-banner'), true);
    assert.equal(await page.isHidden('#approvals-count'), true);
    assert.equal(await other.isHidden('#approvals-banner'), true);
    assert.equal(await page.title(), 'Approvals · cordon');
    assert.equal(await page.getAttribute('#nav a[data-view="approvals"]', 'aria-current'), 'page');
  });

  test('SBX-7: a held command is announced, shown scrubbed as text, counts down, and Allow lets it run', { timeout: T }, async () => {
    const nonce = `n${Date.now().toString(16)}`;
    const line = `git push https://x:${FAKE_TOKEN}@example.com/r.git ${nonce} '${HOSTILE}'`;
    const run = startRun('gatebot', [{ bash: line }, { bash: 'pwd' }]);

    // The banner and the nav count, on another page of the dashboard.
    await other.waitForSelector('#approvals-banner:not([hidden])', { timeout: 15000 });
    assert.equal((await other.textContent('#approvals-banner')).trim(), '1 command waits for your approval →');
    assert.equal(await other.getAttribute('#approvals-banner-link', 'href'), '#approvals');
    assert.equal(await other.textContent('#approvals-count'), '1');
    assert.match(await other.getAttribute('#nav a[data-view="approvals"]', 'aria-label'), /^Approvals, 1 command waits/);

    // The card.
    const card = page.locator('.approval-card[data-verb="git"]');
    await card.waitFor({ timeout: 5000 });
    assert.equal(await cards().count(), 1);
    assert.equal(await card.getAttribute('data-agent'), 'gatebot');
    assert.equal(await card.locator('.verb').textContent(), 'git');
    assert.equal(await card.locator('.agent').textContent(), 'gatebot');
    assert.equal(await card.locator('.rule').textContent(), 'ask-git-push');
    assert.equal(await card.locator('.cwd').textContent(), '.');
    const args = await card.locator('.args').textContent();
    assert.ok(args.includes(nonce), `args shown: ${args}`);
    assert.ok(!args.includes(FAKE_TOKEN), 'the token is scrubbed');
    assert.ok(args.includes('***'), `the scrub mark: ${args}`);
    assert.ok(args.includes(HOSTILE), 'markup shown as text');
    const dom = await page.evaluate(() => ({
      imgs: document.querySelectorAll('img').length,
      handlers: document.querySelectorAll('[onerror]').length,
      argKids: document.querySelector('.approval-card .args').children.length,
      pwned: window.__pwned,
    }));
    assert.deepEqual(dom, { imgs: 0, handlers: 0, argKids: 0, pwned: undefined });

    // The countdown: a number of seconds that goes down (server clock).
    const left = async () => Number(await card.locator('.countdown').getAttribute('data-remaining'));
    const t0 = await left();
    assert.ok(t0 > 30000 && t0 <= 60000, `remaining ${t0} ms`);
    assert.match(await card.locator('.countdown').textContent(), /^\d+ s left$|^\d+:\d\d left$/);
    await page.waitForFunction((v) => Number(document.querySelector('.approval-card .countdown').dataset.remaining) <= v - 1000,
      t0, { timeout: 5000 });

    // Buttons: real buttons, named by the command, not by its arguments.
    const allow = card.locator('button.allow');
    const deny = card.locator('button.deny');
    assert.equal(await allow.getAttribute('aria-label'), 'Allow git for gatebot');
    assert.equal(await deny.getAttribute('aria-label'), 'Deny git for gatebot');
    assert.equal(await allow.getAttribute('type'), 'button');
    await page.screenshot({ path: outPath('approvals.png'), fullPage: true });
    await page.screenshot({ path: outPath('approvals.jpg'), type: 'jpeg', quality: 55 });

    // Keyboard: focus Allow and press Enter.
    await allow.focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('.approvals-empty', { timeout: 5000 });
    assert.equal(await cards().count(), 0);
    assert.match(await page.textContent('.approvals-status'), /^Allowed git for gatebot\.$/);
    await other.waitForSelector('#approvals-banner[hidden]', { state: 'attached', timeout: 5000 });
    assert.equal(await other.isHidden('#approvals-count'), true);

    // The gate call succeeded, and the next one ran.
    const res = await results(run);
    assert.equal(res[0].exit, 0, JSON.stringify(res[0]));
    assert.equal(JSON.parse(res[0].stdout).hookSpecificOutput.permissionDecision, 'allow');
    assert.equal(res[1].exit, 0, JSON.stringify(res[1]));
    const rec = await waitAudit((r) => r.verdict === 'ask-allow', 'ask-allow');
    assert.equal(rec[0].verb, 'git');
    assert.equal(rec[0].agent, 'gatebot');
  });

  test('SBX-7: Deny refuses the command', { timeout: T }, async () => {
    const run = startRun('gatebot', [{ bash: 'git push origin main' }]);
    const card = page.locator('.approval-card[data-verb="git"]');
    await card.waitFor({ timeout: 15000 });
    await card.locator('button.deny').click();
    await page.waitForSelector('.approvals-empty', { timeout: 5000 });
    assert.match(await page.textContent('.approvals-status'), /^Denied git for gatebot\.$/);
    const res = await results(run);
    assert.equal(res[0].exit, 2, JSON.stringify(res[0]));
    assert.equal(res[0].stdout, '');
    const rec = await waitAudit((r) => r.verdict === 'ask-deny', 'ask-deny');
    assert.equal(rec[0].verb, 'git');
    await other.waitForSelector('#approvals-banner[hidden]', { state: 'attached', timeout: 5000 });
  });

  test('SBX-7/DA-1: at 390×844 a held command, its whole command line and Allow/Deny fit the screen', { timeout: T }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    // A long line with a long unbroken word: it must wrap, not widen the page.
    const long = `${'x'.repeat(160)}-${Date.now().toString(16)}`;
    const line = `git push origin refs/heads/${long}:refs/heads/${long} --force-with-lease`;
    const run = startRun('gatebot', [{ bash: line }]);
    const card = page.locator('.approval-card[data-verb="git"]');
    await card.waitFor({ timeout: 15000 });
    const m = await page.evaluate(() => {
      const c = document.querySelector('.approval-card');
      const a = c.querySelector('.args');
      const box = (e) => e.getBoundingClientRect();
      const inside = (e) => box(e).left >= -0.5 && box(e).right <= innerWidth + 0.5;
      return {
        page: document.documentElement.scrollWidth <= innerWidth,
        card: inside(c),
        args: inside(a) && a.scrollWidth <= a.clientWidth,
        whole: a.scrollHeight <= a.clientHeight + 1, // nothing scrolled out of sight
        wraps: (() => {
          const r = document.createRange();
          r.selectNodeContents(a);
          return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size >= 3;
        })(),
        text: a.textContent,
        allow: inside(c.querySelector('button.allow')),
        deny: inside(c.querySelector('button.deny')),
      };
    });
    assert.ok(m.text.includes(long), 'the whole command line is shown');
    delete m.text;
    assert.deepEqual(m, { page: true, card: true, args: true, whole: true, wraps: true, allow: true, deny: true });
    await page.screenshot({ path: outPath('approvals-390.png'), fullPage: true });
    await card.locator('button.deny').click();
    await page.waitForSelector('.approvals-empty', { timeout: 5000 });
    const res = await results(run);
    assert.equal(res[0].exit, 2, JSON.stringify(res[0]));
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('SBX-7: no answer in time — "timed out — denied", then the card goes', { timeout: T }, async () => {
    const known = await ctx.request.get(`${cordon.base}/api/agents/gatequick`,
      { headers: await pageKeyHeaders(page) });
    assert.equal(known.status(), 200,
      `the gatequick manifest did not load (does this build parse \`commands:\`?):\n${cordon.output().stderr}`);
    const run = startRun('gatequick', [{ bash: 'git push origin main' }]);
    const card = page.locator('.approval-card[data-agent="gatequick"]');
    await card.waitFor({ timeout: 15000 });
    const t0 = Number(await card.locator('.countdown').getAttribute('data-remaining'));
    assert.ok(t0 > 0 && t0 <= 5000, `remaining ${t0} ms`);
    // Seen in one of two ways: the page's countdown reached zero while the
    // server still listed it, or the server dropped it first.  Record which.
    await page.evaluate(() => {
      window.__timedOut = false;
      new MutationObserver(() => {
        if (document.querySelector('.approval-card[data-state="timed-out"] .countdown')?.textContent === 'timed out — denied')
          window.__timedOut = true;
      }).observe(document.querySelector('.approvals-body'), { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await page.waitForFunction(() => window.__timedOut, null, { timeout: 10000 });
    assert.equal(await card.locator('button.allow').isDisabled(), true);
    assert.equal(await card.locator('button.deny').isDisabled(), true);
    await page.waitForSelector('.approvals-empty', { timeout: 10000 });
    const res = await results(run);
    assert.equal(res[0].exit, 2, JSON.stringify(res[0]));
    const rec = await waitAudit((r) => r.verdict === 'ask-timeout', 'ask-timeout');
    assert.equal(rec[0].agent, 'gatequick');
  });

  test('DA-3/PER-6: no CSP violation, no console error over the session', { timeout: T }, async () => {
    assert.deepEqual(w.csp, [], 'CSP violations');
    assert.deepEqual(w.consoleErrors, [], 'console errors');
    assert.deepEqual(w.pageErrors, [], 'page errors');
    assert.deepEqual(w.failedRequests, [], 'failed requests');
  });

  test('cordon stops cleanly', { timeout: T }, async () => {
    await ctx.close();
    const st = await cordon.stop({ timeoutMs: 15000 });
    assert.deepEqual({ code: st.code, signal: st.signal }, { code: 0, signal: null },
      `cordon stderr:\n${cordon.output().stderr}`);
    assert.deepEqual(st.leftovers, []);
  });
});
