// The dashboard's own logic against a scripted API (contract.mjs) that
// answers the SPEC.md shapes, so DA-2's generation rule, NDJSON lines split
// across chunks, the Control Room's fail-soft errors and the Markdown
// reader are tested whatever daemons this build has.  The real cordon is
// dashboard.test.mjs's job.  127.0.0.1 only.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, watch, withTimeout, checkUnavailable, outPath } from './harness.mjs';
import { startContract } from './contract.mjs';
import { chatTitle } from '../../broker/web/vault.js';

const T = 30000;
let srv;
let browser;
let ctx;
let w;
let page;

before(async () => {
  srv = await startContract();
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  w = await watch(ctx);
  page = await ctx.newPage();
  await page.goto(`${srv.base}/ui/#agent/demo`, { waitUntil: 'load' });
  await page.waitForSelector('#prompt');
}, { timeout: T });

after(async () => {
  await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium').catch(() => {});
  await srv?.close();
}, { timeout: T });

const storedChat = () => page.evaluate(() => JSON.parse(localStorage.getItem('cordon.chat.demo') || 'null'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('API-3/DA-1: NDJSON split across chunks streams; usage strip and saved link', { timeout: T }, async () => {
  await page.fill('#prompt', 'hi');
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector('.msg-agent[data-state="done"]', { timeout: 10000 });
  assert.equal(await page.textContent('.msg-agent .msg-text'), 'Hello, wörld<b>!</b> t0 t1 t2 t3 t4');
  assert.equal(await page.locator('.chat-log b').count(), 0, 'tokens are text');
  assert.match(await page.textContent('.msg-agent .usage'), /inputTokens\s*12.*outputTokens\s*34/);
  assert.equal(await page.getAttribute('.msg-agent a.saved-link', 'href'),
    '#vault/00_Inbox/cordon/chats/2026-01-01-0000-demo-0badc0de.md');
  const c = await storedChat();
  assert.equal(c.messages.length, 2);
  assert.equal(c.messages[1].state, 'done');
  assert.match(c.session, /^[A-Za-z0-9_-]{1,96}$/);
  // The saved link opens the note in the Vault view, folders unfolded.
  await page.click('.msg-agent a.saved-link');
  await page.waitForSelector('.reader[data-state="ok"] .md h3', { timeout: 10000 });
  assert.equal(await page.textContent('.reader .md h3'), 'hello');
  assert.equal(await page.locator('.tree a[aria-current="page"]').count(), 1);
  await page.goBack();
  await page.waitForSelector('.msg-agent[data-state="done"]');
});

test('DA-2: New session during a run — the old run never writes into the cleared room', { timeout: T }, async () => {
  await page.click('button.new-session');
  await page.fill('#prompt', 'a long one');
  await page.click('button.send');
  await page.waitForFunction(() => /t2/.test(document.querySelector('.msg-agent:last-child .msg-text')?.textContent || ''));
  await page.click('button.new-session');
  await sleep(800); // the cancelled run keeps sending a few tokens, then ends
  assert.equal(await page.locator('.chat-log .msg').count(), 0);
  const c = await storedChat();
  assert.ok(c === null || c.messages.length === 0, `stored: ${JSON.stringify(c)}`);
  assert.ok(srv.log.includes('POST /api/runs/r2/cancel'), 'the run was cancelled on the server');
  assert.equal(srv.runs.size, 0);
});

test('DA-2: leaving and re-opening the room — the old run never writes there', { timeout: T }, async () => {
  await page.fill('#prompt', 'another long one');
  await page.click('button.send');
  await page.waitForFunction(() => /t1/.test(document.querySelector('.msg-agent:last-child .msg-text')?.textContent || ''));
  await page.evaluate(() => { location.hash = 'agents'; });
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('.msg-agent[data-state="stopped"]');
  const before = await page.textContent('.msg-agent .msg-text');
  await sleep(800);
  assert.equal(await page.textContent('.msg-agent .msg-text'), before, 'no token after re-opening');
  const c = await storedChat();
  assert.equal(c.messages[1].text, before);
  assert.equal(c.messages[1].state, 'stopped');
  assert.equal(await page.isDisabled('#stop-all'), true);
});

test('DA-2: a tampered stored chat is read field by field, never as markup', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'agents'; });
  await page.evaluate(() => localStorage.setItem('cordon.chat.demo', JSON.stringify({
    v: 1, session: 's-ok',
    messages: [
      { role: 'system', text: 'dropped' },
      { role: 'user', text: '<img src=x>' },
      { role: 'agent', text: 42 },
      { role: 'agent', text: 'kept', state: 'running', saved: { path: 5 } },
    ],
  })));
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('.msg-agent');
  assert.deepEqual(await page.$$eval('.chat-log .msg', (ms) => ms.map((m) => [m.className, m.dataset.state, m.querySelector('.msg-text').textContent])),
    [['msg msg-user', 'done', '<img src=x>'], ['msg msg-agent', 'interrupted', 'kept']]);
  assert.equal(await page.locator('.chat-log img, .chat-log a').count(), 0);
  await page.evaluate(() => localStorage.setItem('cordon.chat.demo', '{not json'));
  await page.evaluate(() => { location.hash = 'agents'; });
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('.chat-empty');
  await page.click('button.new-session');
});

test('API-4/DA-1: Stop, Esc and Stop all cancel; reload restores the chat', { timeout: T }, async () => {
  for (const how of ['stop', 'escape', 'stop-all']) {
    await page.fill('#prompt', `long ${how}`);
    await page.click('button.send');
    await page.waitForFunction(() => !document.getElementById('stop-all').disabled);
    assert.equal(await page.textContent('#stop-all'), 'Stop all (1)');
    if (how === 'stop') await page.click('button.stop');
    else if (how === 'escape') await page.keyboard.press('Escape');
    else await page.click('#stop-all');
    await page.waitForSelector('.msg-agent:last-child[data-state="stopped"]', { timeout: 10000 });
    assert.equal(await page.textContent('.msg-agent:last-child .error-pill'), 'killed');
  }
  const n = await page.locator('.chat-log .msg').count();
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('.msg-agent');
  assert.equal(await page.locator('.chat-log .msg').count(), n);
});

test('API-2/DA-1: agent cards show name, readiness, version, keys', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'agents'; });
  const card = page.locator('.agent-card[data-agent="demo"]');
  await card.waitFor();
  assert.equal(await card.locator('h3 a.card-title').textContent(), 'Demo agent');
  assert.equal(await card.locator('.readiness').textContent(), 'live');
  assert.equal(await card.locator('.version').textContent(), 'demo 1.0');
  assert.equal(await card.locator('.keys').textContent(), 'DEMO_API_KEY set');
  // SP-18: not probed yet reads "checking", not "offline".
  const fresh = page.locator('.agent-card[data-agent="fresh"]');
  assert.equal(await fresh.locator('.readiness').textContent(), 'checking');
});

test('DA-2: memory only keeps nothing in localStorage; "clear all chat cache"', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'agents'; });
  await page.check('#memory-only');
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('#prompt');
  await page.fill('#prompt', 'in memory');
  await page.click('button.send');
  await page.waitForSelector('.msg-agent:last-child[data-state="done"]');
  assert.equal(await storedChat(), null);
  await page.evaluate(() => { location.hash = 'agents'; });
  await page.uncheck('#memory-only');
  assert.notEqual(await storedChat(), null, 'back on disk');
  await page.click('button.clear-cache');
  assert.equal(await storedChat(), null);
});

test('API-5/DA-1: Control Room output, fail-soft error pill, truncated badge', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.click('.chip[data-action="hello"]');
  await page.waitForSelector('.viewer[data-action="hello"][data-state="ok"]');
  assert.equal(await page.textContent('.viewer .stdout .out'), 'hello <b>world</b>\n');
  assert.equal(await page.locator('.viewer b').count(), 0, 'output is text');
  await page.click('.chip[data-action="slow"]');
  await page.waitForSelector('.viewer[data-action="slow"][data-state="error"]');
  assert.equal(await page.textContent('.viewer .error-pill'), 'timeout');
  assert.equal(await page.textContent('.viewer .error-msg'), 'The action took too long and was stopped.');
  await page.click('.chip[data-action="flood"]');
  await page.waitForSelector('.viewer[data-action="flood"][data-state="ok"]');
  assert.equal(await page.locator('.viewer .pill', { hasText: 'truncated' }).count(), 1);
});

test('VA-2/DA-1: Markdown renders as text; only vault links are live', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'vault/Hostile.md'; });
  await page.waitForSelector('.reader[data-state="ok"] .md');
  const r = await page.evaluate(() => {
    const md = document.querySelector('.reader .md');
    return {
      bad: md.querySelectorAll('script, b, img, iframe').length,
      hrefs: [...md.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      inert: [...md.querySelectorAll('.md-link-inert')].map((s) => s.textContent),
      pwned: window.__pwned,
    };
  });
  assert.deepEqual(r, { bad: 0, hrefs: ['#vault/Welcome.md'], inert: ['js', 'out'], pwned: undefined });
  await page.click('.reader a.md-link');
  await page.waitForFunction(() => document.querySelector('.reader')?.dataset.note === 'Welcome.md');
  await page.evaluate(() => { location.hash = 'vault/Nope.md'; });
  await page.waitForSelector('.reader[data-state="refused"]');
  assert.equal(await page.textContent('.reader .panel'), 'There is no such note in the vault.');
});

test('DA-1: Activity filters by kind', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'activity'; });
  await page.waitForSelector('#activity-rows tr');
  assert.equal(await page.locator('#activity-rows tr').count(), 2);
  await page.selectOption('#filter-agent', 'demo');
  await page.selectOption('#filter-kind', 'http.request');
  await page.waitForFunction(() => document.querySelectorAll('#activity-rows tr').length === 1);
  assert.ok(srv.log.some((l) => l === 'GET /api/audit'));
});

test('API-3/DA-1: tool calls and notices show where they came, outcome in words; kept across reload', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('#prompt');
  await page.click('button.new-session');
  await page.fill('#prompt', 'use tools');
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector('.msg-agent[data-state="done"]', { timeout: 10000 });
  const shown = () => page.$$eval('.msg-agent .msg-text > *', (ns) => ns.map((n) => (n.classList.contains('tool')
    ? [n.dataset.state, n.querySelector('.tool-name').textContent, n.querySelector('.tool-input').textContent,
      n.querySelector('.tool-status').textContent, n.querySelector('.tool-summary')?.textContent ?? null]
    : [n.className, n.textContent])));
  const want = [
    ['ok', 'Bash', 'ls -la <b>x</b>', '✓ ok', 'a.txt\n<img src=x>'],
    ['failed', 'Read', '~/notes.txt', '✗ failed', 'EACCES'],
    ['notice', 'notice: the agent is retrying its model API (attempt 1 of 10: no connection)'],
    ['running', 'Grep', '{"pattern":"x"}', '… running', null],
  ];
  assert.deepEqual(await shown(), want);
  // Each step sits where it came: the text before it, then after.
  const text = await page.$eval('.msg-agent .msg-text', (b) => [...b.childNodes].map((n) => (n.nodeType === 3 ? n.data : '|')).join(''));
  assert.equal(text, 'Hello, wörld<b>!</b>|\n\nNext.||| t0 t1 t2 t3 t4');
  assert.equal(await page.locator('.chat-log b, .chat-log img').count(), 0, 'tool strings are text');
  // A result is folded until asked for.
  assert.equal(await page.isVisible('.tool-summary >> nth=0'), false);
  await page.click('.tool-result summary >> nth=0');
  assert.equal(await page.isVisible('.tool-summary >> nth=0'), true);
  assert.equal(await page.textContent('.msg-agent .error-reason'),
    "the agent could not reach its model API: this agent's sandbox has network: none");
  // DA-2: the chat store keeps them.
  const c = await storedChat();
  assert.equal(c.messages[1].steps.length, 4);
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('.msg-agent .tool');
  assert.deepEqual(await shown(), want);
  assert.equal(await page.textContent('.msg-agent .error-reason'),
    "the agent could not reach its model API: this agent's sandbox has network: none");
  await page.click('button.new-session');
});

test('DA-2: a tampered stored step is dropped or read as text', { timeout: T }, async () => {
  await page.evaluate(() => { location.hash = 'agents'; });
  await page.evaluate(() => localStorage.setItem('cordon.chat.demo', JSON.stringify({
    v: 1, session: 's-ok',
    messages: [{ role: 'agent', text: 'abc', state: 'done', steps: [
      { at: 1, kind: 'tool', tool: '<img src=x>', input: 5, ok: 'yes' },
      { at: 0, kind: 'notice', text: 'before the last: dropped' },
      { at: 9, kind: 'notice', text: 'past the text: dropped' },
      { at: 2, kind: 'script', text: 'dropped' },
      { at: 2, kind: 'notice', text: 'kept' },
    ] }],
  })));
  await page.evaluate(() => { location.hash = 'agent/demo'; });
  await page.waitForSelector('.msg-agent .tool');
  assert.deepEqual(await page.$eval('.msg-agent .msg-text', (b) => [...b.childNodes].map((n) => (n.nodeType === 3 ? n.data : n.className))),
    ['a', 'tool', 'b', 'notice', 'c']);
  assert.equal(await page.textContent('.msg-agent .tool-name'), '<img src=x>');
  assert.equal(await page.textContent('.msg-agent .tool-status'), '… running');
  assert.equal(await page.locator('.chat-log img').count(), 0);
  await page.click('button.new-session');
});

test('DA-3: no CSP violation, no unexpected console error', { timeout: T }, async () => {
  // The one expected: the deliberate 404 for a note that is not there.
  const errs = w.consoleErrors.filter((e) => !/status of 404.*\/api\/vault\/note\?path=Nope\.md/.test(e));
  assert.deepEqual(w.csp, []);
  assert.deepEqual(errs, []);
  assert.deepEqual(w.pageErrors, []);
});

test('DA-1: with every route still 501, each view shows the neutral panel', { timeout: T }, async () => {
  const s501 = await startContract({ notImplemented: true });
  const c = await browser.newContext({ viewport: { width: 1280, height: 600 } });
  try {
    const cw = await watch(c);
    const p = await c.newPage();
    const views = [
      ['agents', 'The agent list'], ['agent/demo', 'The agent page'], ['vault', 'The vault'],
      ['activity', 'The activity log'], ['missions', 'Missions'], ['approvals', 'Approving held commands'],
    ];
    await p.goto(`${s501.base}/ui/#agents`, { waitUntil: 'load' });
    for (const [hash, what] of views) {
      await p.evaluate((h) => { location.hash = h; }, hash);
      const sel = `#view-dynamic[data-view="${hash.split('/')[0]}"] .panel.unavailable`;
      await p.waitForSelector(sel, { timeout: 5000 });
      assert.equal((await p.textContent(sel)).trim(), `${what} is not available in this build yet.`);
    }
    await p.screenshot({ path: outPath('unavailable.png') });
    // The 501s stop the polling: no route is asked twice in two seconds.
    const n = s501.log.length;
    await sleep(2500);
    assert.equal(s501.log.length, n, `still polling: ${s501.log.slice(n)}`);
    // Five views, and the approvals watch behind the header banner (asked
    // once, then never again).
    assert.equal(await checkUnavailable(cw), 6, 'one attributed console error per 501 fetch');
    assert.deepEqual(cw.consoleErrors, []);
    assert.deepEqual(cw.csp, []);
  } finally {
    await c.close();
    await s501.close();
  }
});

test('VA-5: a chat note title cut from its prompt is shown cut at a word, with "…"', () => {
  const note = (title, prompt, type = 'chat') => `---\ntype: ${type}\nstatus: draft\nsource: cordon\n` +
    `agent: "demo"\ncreated: 2026-01-01T00:00:00.000Z\n---\n\n# ${title}\n\n## prompt\n\n${prompt}` +
    '\n\n## response\n\nok\n';
  const h1 = (t) => t.split('\n').find((l) => l.startsWith('# '));
  const cut = (p) => p.replace(/[\n\t]/g, ' ').trim().slice(0, 60).trimEnd(); // what vaultd writes
  const title = (p) => h1(chatTitle(note(cut(p), p)));
  // Cut mid-word: back to the last whole word.
  assert.equal(title('Summarise the operator\'s first hour with cordon on a fresh machine, and more'),
    '# Summarise the operator\'s first hour with cordon on a fresh…');
  // Cut at a word's end: the whole title.
  assert.equal(title(`${'a'.repeat(59)} word`), `# ${'a'.repeat(59)}…`);
  // One word longer than the cut: cut where it is.
  assert.equal(title('x'.repeat(80)), `# ${'x'.repeat(60)}…`);
  // Lines of the prompt are joined by spaces in the title.
  assert.equal(title(`line one\nline two ${'z'.repeat(60)}`), '# line one line two…');
  // Not cut: unchanged, also with a trailing newline in the prompt.
  assert.equal(title('hello'), '# hello');
  assert.equal(title('hello\n'), '# hello');
  // Not a chat note, or a title that is not the prompt's start: unchanged.
  const other = note('Summarise the', 'Summarise the whole thing', 'mission');
  assert.equal(chatTitle(other), other);
  const mine = note('My own title', 'Summarise the whole thing');
  assert.equal(chatTitle(mine), mine);
});
