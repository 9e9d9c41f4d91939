// The Missions view (DA-1, API-7, MI-1 ... MI-4) in headless Chromium.
//
// First against the scripted API (contract.mjs): the form generated from
// each option type with its constraints and defaults, client-side checks
// that keep a bad value from being sent, the neutral result of every
// status, refusals with their stock sentences, the running state and its
// elapsed time (a run cannot be stopped, and the page says so), text
// only for anything the API sends, and typed values surviving a refresh.
//
// Then against a real `cordon run --demo` with extra missions on an echo
// agent: the demo's missions listed, a run that writes its note, the
// server refusing what the page cannot check (a POSIX-only pattern), a
// permission-denied run, a scheduled-only mission, a hostile option value
// that reaches neither the page nor the audit trail, and no CSP violation
// or console error.  Talks to 127.0.0.1 only; touches only temp dirs.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  startCordon, launchBrowser, watch, outPath, withTimeout,
} from './harness.mjs';
import { startContract } from './contract.mjs';

const T = 60000;
const HOSTILE = '<img src=x onerror=window.__pwned=1>';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// The form control of option `name` in card selector c.
const inp = (c, name) => `${c} :is(input, select)[data-option="${name}"]`;

async function fields(page, id) {
  return page.$$eval(`.mission-card[data-mission="${id}"] .opt-row`, (rows) => rows.map((r) => {
    const i = r.querySelector('input, select');
    return {
      name: r.dataset.option,
      type: r.dataset.type,
      tag: i.tagName.toLowerCase(),
      inputType: i.type,
      value: i.type === 'checkbox' ? i.checked : i.value,
      required: i.required,
      maxLength: i.maxLength,
      min: i.min,
      max: i.max,
      pattern: i.getAttribute('pattern'),
      dataPattern: i.dataset.pattern ?? null,
      options: i.tagName === 'SELECT' ? [...i.options].map((o) => o.value) : null,
    };
  }));
}

// ---- the page's own logic, against the scripted API ---------------------------

describe('against a scripted API', () => {
  let srv;
  let browser;
  let ctx;
  let w;
  let page;

  const REVIEW = {
    id: 'weekly-review',
    label: 'Weekly review <b>bold</b>',
    agent: 'demo',
    manual: true,
    cron: '0 18 * * 0',
    timezone: 'Europe/Berlin',
    options: [
      { name: 'project', type: 'string', required: true, maxLength: 60, pattern: '^[A-Za-z0-9 _-]+$' },
      { name: 'words', type: 'integer', required: false, min: 50, max: 2000, default: 400 },
      { name: 'draft', type: 'boolean', required: false, default: true },
      { name: 'tone', type: 'enum', required: true, values: ['plain', 'formal'] },
    ],
    outputs: [{ type: 'vault-note' }, { type: 'event' }],
    permissions: ['vault-write', 'event-emit'],
    running: false,
    lastRun: {
      runId: '00000000000000c1', trigger: 'cron', status: 'error', durationMs: 300000,
      outputsPersisted: 0, outputsEmitted: 0, errorClass: 'timeout', finishedAt: Date.UTC(2026, 0, 4, 17, 5),
    },
  };
  const NIGHTLY = {
    id: 'nightly', label: 'Nightly', agent: 'demo', manual: false, cron: '30 2 * * *', timezone: 'UTC',
    options: [], outputs: [{ type: 'event' }], permissions: ['event-emit'], running: true,
    elapsedMs: 65000,
  };

  before(async () => {
    srv = await startContract();
    srv.missions.push(REVIEW, NIGHTLY,
      { id: 'Bad Id', label: 'x', options: [] }, // malformed: ignored
      { id: 'bad-opts', label: 'x', options: [{ name: '1x', type: 'string' }] });
    srv.missionAnswers.set('weekly-review', {
      status: 200,
      delayMs: 2500,
      body: { ok: true, runId: '00000000000000d1', status: 'success', durationMs: 1234, outputsPersisted: 1, outputsEmitted: 1 },
    });
    browser = await launchBrowser();
    ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    w = await watch(ctx, {
      // The refusals below answer 4xx on purpose; Chromium logs each.
      allow: [(m) => /status of (409|400)/.test(m.text())],
    });
    page = await ctx.newPage();
    await page.goto(`${srv.base}/ui/#missions`, { waitUntil: 'load' });
    await page.waitForSelector('.mission-card[data-mission="weekly-review"]');
  }, { timeout: T });

  after(async () => {
    await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium').catch(() => {});
    await srv?.close();
  }, { timeout: T });

  test('one card per valid mission; label, trigger, outputs and permissions as text', { timeout: T }, async () => {
    assert.deepEqual(await page.$$eval('.mission-card', (cs) => cs.map((c) => c.dataset.mission)),
      ['weekly-review', 'nightly']);
    const card = '.mission-card[data-mission="weekly-review"]';
    assert.equal(await page.textContent(`${card} h3`), 'Weekly review <b>bold</b>');
    assert.equal(await page.locator(`${card} h3 b`).count(), 0, 'labels are text');
    assert.equal(await page.textContent(`${card} .trigger`), 'Manual · Cron 0 18 * * 0 (Europe/Berlin)');
    assert.equal(await page.textContent(`${card} .outputs`), 'vault note, event');
    assert.equal(await page.textContent(`${card} .permissions`), 'vault-write, event-emit');
    assert.equal(await page.textContent('.mission-card[data-mission="nightly"] .trigger'), 'Cron 30 2 * * * (UTC)');
  });

  test('the form follows the schema: types, constraints, defaults', { timeout: T }, async () => {
    const f = await fields(page, 'weekly-review');
    assert.deepEqual(f.map((x) => [x.name, x.tag, x.inputType]), [
      ['project', 'input', 'text'], ['words', 'input', 'number'],
      ['draft', 'input', 'checkbox'], ['tone', 'select', 'select-one'],
    ]);
    assert.equal(f[0].maxLength, 60);
    assert.equal(f[0].required, true);
    assert.equal(f[0].value, '');
    assert.equal(f[0].dataPattern, '^[A-Za-z0-9 _-]+$');
    assert.equal(f[1].min, '50');
    assert.equal(f[1].max, '2000');
    assert.equal(f[1].value, '400');
    assert.equal(f[1].required, false);
    assert.equal(f[2].value, true);
    assert.deepEqual(f[3].options, ['', 'plain', 'formal']);
    assert.equal(f[3].required, true);
  });

  test('the last run: status, duration, counts, error class with its stock sentence', { timeout: T }, async () => {
    const lr = '.mission-card[data-mission="weekly-review"] .last-run';
    assert.equal(await page.getAttribute(lr, 'data-status'), 'error');
    assert.equal(await page.getAttribute(lr, 'data-error-class'), 'timeout');
    assert.equal(await page.getAttribute(lr, 'data-trigger'), 'cron');
    assert.match(await page.textContent(lr), /300\.0 s/);
    assert.match(await page.textContent(lr), /0 notes written/);
    assert.match(await page.textContent(`${lr} .error-msg`), /^timeout The agent ran past the mission's timeout and was stopped\.$/);
    assert.match(await page.textContent('.mission-card[data-mission="nightly"] .last-run'), /Not run yet/);
  });

  test('a running, scheduled-only mission cannot be run by hand', { timeout: T }, async () => {
    const c = '.mission-card[data-mission="nightly"]';
    assert.equal(await page.isVisible(`${c} .running-pill`), true);
    // Its elapsed time counts on from the list's elapsedMs.
    assert.match(await page.textContent(`${c} .running-pill`), /^running 1 min \d+ s$/);
    assert.equal(await page.isDisabled(`${c} button.run-mission`), true);
    assert.equal(await page.textContent(`${c} .mission-note`), 'Runs on its schedule only.');
    assert.equal(await page.textContent(`${c} .no-options`), 'This mission has no options.');
  });

  test('client-side checks keep bad values from being sent', { timeout: T }, async () => {
    const c = '.mission-card[data-mission="weekly-review"]';
    const before = srv.missionRuns.length;
    await page.fill(inp(c, 'project'), 'a/b'); // pattern
    await page.fill(inp(c, 'words'), '9999'); // over max
    await page.click(`${c} button.run-mission`);
    const errs = await page.$$eval(`${c} .opt-row`, (rows) =>
      rows.map((r) => [r.dataset.option, r.dataset.invalid, r.querySelector('.field-error').textContent]));
    assert.deepEqual(errs, [
      ['project', 'true', 'Does not match the pattern.'],
      ['words', 'true', 'Between 50 and 2000.'],
      ['draft', 'false', ''],
      ['tone', 'true', 'Choose a value.'],
    ]);
    assert.equal(await page.textContent(`${c} .mission-note`), 'Fix the marked options first.');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.option), 'project');
    await page.fill(inp(c, 'words'), '12.5');
    await page.click(`${c} button.run-mission`);
    assert.equal(await page.textContent(`${c} .opt-row[data-option="words"] .field-error`), 'Enter a whole number.');
    await page.fill(inp(c, 'project'), 'x'.repeat(61)); // maxlength attr truncates typing
    assert.equal((await page.inputValue(inp(c, 'project'))).length, 60);
    await sleep(200);
    assert.equal(srv.missionRuns.length, before, 'nothing was sent');
  });

  test('what was typed survives a refresh of the list', { timeout: T }, async () => {
    const c = '.mission-card[data-mission="weekly-review"]';
    await page.fill(inp(c, 'project'), 'cordon');
    // The view asks for the list again every 10 s; wait for one.
    const n = srv.log.filter((l) => l === 'GET /api/missions').length;
    await page.waitForFunction(() => true, null, { timeout: 100 });
    const deadline = Date.now() + 15000;
    while (srv.log.filter((l) => l === 'GET /api/missions').length === n && Date.now() < deadline)
      await sleep(100);
    assert.ok(srv.log.filter((l) => l === 'GET /api/missions').length > n, 'the list was asked again');
    await sleep(200);
    assert.equal(await page.inputValue(inp(c, 'project')), 'cordon');
  });

  test('Run sends exactly the typed options and shows the neutral result', { timeout: T }, async () => {
    const c = '.mission-card[data-mission="weekly-review"]';
    await page.fill(inp(c, 'project'), 'cordon 2');
    await page.fill(inp(c, 'words'), '120');
    await page.uncheck(inp(c, 'draft'));
    await page.selectOption(inp(c, 'tone'), 'formal');
    const n = srv.missionRuns.length;
    await page.click(`${c} button.run-mission`);
    await page.waitForSelector(`${c} .mission-result[data-state="running"]`, { timeout: 5000 });
    assert.equal(await page.isDisabled(`${c} button.run-mission`), true);
    // The answer comes when the run ends: meanwhile the page counts, and
    // says that a mission run cannot be stopped from here.
    await page.waitForFunction((sel) => /^running… [1-9]\d* s$/.test(
      document.querySelector(`${sel} .mission-result .run-elapsed`)?.textContent || ''), c, { timeout: 5000 });
    assert.match(await page.textContent(`${c} .running-pill`), /^running [1-9]\d* s$/);
    assert.match(await page.textContent(`${c} .mission-nostop`), /cannot be stopped from the dashboard/);
    await page.waitForSelector(`${c} .mission-result[data-state="done"]`, { timeout: 5000 });
    assert.equal(await page.isHidden(`${c} .running-pill`), true);
    assert.deepEqual(srv.missionRuns.slice(n), [['weekly-review',
      { options: { project: 'cordon 2', words: 120, draft: false, tone: 'formal' } }]]);
    const r = `${c} .mission-result .run-facts`;
    assert.equal(await page.getAttribute(r, 'data-status'), 'success');
    const text = await page.textContent(r);
    assert.match(text, /success/);
    assert.match(text, /1\.2 s/);
    assert.match(text, /1 note written/);
    assert.match(text, /1 event emitted/);
    assert.equal(await page.locator(`${r} .error-pill`).count(), 0);
    assert.equal(await page.isDisabled(`${c} button.run-mission`), false);
  });

  test('finished runs that did not succeed, and refusals, get stock sentences', { timeout: T }, async () => {
    const c = '.mission-card[data-mission="weekly-review"]';
    const cases = [
      [{ status: 200, body: { ok: false, runId: '00000000000000d2', status: 'denied', durationMs: 0, outputsPersisted: 0, outputsEmitted: 0, errorClass: 'permission-denied' } },
        'done', /permission-denied An output needs a permission the mission does not declare; nothing ran\./],
      [{ status: 200, body: { ok: false, runId: '00000000000000d3', status: 'error', durationMs: 40, outputsPersisted: 1, outputsEmitted: 0, errorClass: 'output-failed' } },
        'done', /output-failed An output could not be written/],
      [{ status: 409, body: { ok: false, error: 'mission-busy' } }, 'refused', /mission-busy This mission is already running\./],
      [{ status: 400, body: { ok: false, error: 'mission-options-invalid' } }, 'refused',
        /mission-options-invalid cordon refused these options: they do not fit the mission's schema\./],
      [{ status: 409, body: { ok: false, error: 'agent-unavailable', detail: '<i>x</i>' } }, 'refused',
        /agent-unavailable The mission's agent is not available\./],
    ];
    for (const [ans, state, re] of cases) {
      srv.missionAnswers.set('weekly-review', ans);
      await page.click(`${c} button.run-mission`);
      await page.waitForSelector(`${c} .mission-result[data-state="${state}"]`, { timeout: 5000 });
      assert.match(await page.textContent(`${c} .mission-result .error-msg`), re);
      assert.equal(await page.locator(`${c} .mission-result i`).count(), 0);
      // Back to neutral before the next case.
      await page.evaluate((sel) => { document.querySelector(sel).dataset.state = 'x'; }, `${c} .mission-result`);
    }
  });

  test('no CSP violation, no page error, only the deliberate 4xx', { timeout: T }, async () => {
    await page.screenshot({ path: outPath('missions-contract.png'), fullPage: true });
    assert.deepEqual(w.csp, []);
    assert.deepEqual(w.consoleErrors, []);
    assert.deepEqual(w.pageErrors, []);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
  });
});

// ---- a real cordon ---------------------------------------------------------------

const ECHO = `# Browser-test agent: prints its prompt back.
name: echo
displayName: Echo
transport: subprocess
transportConfig:
  bin: /bin/echo
  args: ["{prompt}"]
  timeoutMs: 20000
`;

const M_NOTE = `id: t-note
label: Echo note
agent: echo
prompt: "Note about {topic}, {count} lines, loud {loud}, style {style}"
options:
  topic: {type: string, maxLength: 200}
  count: {type: integer, min: 1, max: 10, default: 3}
  loud: {type: boolean, default: false}
  style: {type: enum, values: [short, long], default: short}
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/missions/t-note, filenameHint: echo}
  - {type: event, event: note.ready}
permissions: [vault-write, event-emit]
trigger: {manual: true}
timeoutMs: 20000
`;

// [[:alpha:]] is POSIX-only: the page cannot check it, the server does.
const M_POSIX = `id: t-posix
label: POSIX pattern
agent: echo
prompt: "Word {word}"
options:
  word: {type: string, maxLength: 20, pattern: "^[[:alpha:]]+$"}
outputs:
  - {type: event, event: word.seen}
permissions: [event-emit]
`;

const M_DENIED = `id: t-denied
label: Missing permission
agent: echo
prompt: "Write something"
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/missions/t-denied, filenameHint: never}
permissions: [event-emit]
`;

const M_CRON = `id: t-cron
label: Scheduled only
agent: echo
prompt: "Nightly"
outputs:
  - {type: event, event: nightly.done}
permissions: [event-emit]
trigger: {manual: false, cron: "15 3 * * 1-5", timezone: Europe/Berlin}
`;

describe('against a real cordon', () => {
  let cordon;
  let browser;
  let ctx;
  let w;
  let page;

  before(async () => {
    cordon = await startCordon({
      demo: true,
      files: {
        'agents/echo.yaml': ECHO,
        'missions/t-note.yaml': M_NOTE,
        'missions/t-posix.yaml': M_POSIX,
        'missions/t-denied.yaml': M_DENIED,
        'missions/t-cron.yaml': M_CRON,
      },
    });
    browser = await launchBrowser();
    ctx = await browser.newContext({ colorScheme: 'light', viewport: { width: 1280, height: 900 } });
    w = await watch(ctx, { allow: [(m) => /status of 400/.test(m.text())] });
    page = await ctx.newPage();
    await page.goto(cordon.loginUrl, { waitUntil: 'load', timeout: 10000 });
    await page.evaluate(() => { location.hash = 'missions'; });
    await page.waitForSelector('.mission-card[data-mission="t-note"]', { timeout: 10000 });
  }, { timeout: T });

  after(async () => {
    await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium').catch(() => {});
    await cordon?.kill();
  }, { timeout: T });

  test('the demo missions and the test missions are listed', { timeout: T }, async () => {
    const ids = await page.$$eval('.mission-card', (cs) => cs.map((c) => c.dataset.mission));
    for (const id of ['daily-summary', 'weekly-review', 't-note', 't-posix', 't-denied', 't-cron'])
      assert.ok(ids.includes(id), `${id} in ${ids}`);
    assert.equal(await page.textContent('.mission-card[data-mission="t-cron"] .trigger'),
      'Cron 15 3 * * 1-5 (Europe/Berlin)');
    assert.equal(await page.isDisabled('.mission-card[data-mission="t-cron"] button.run-mission'), true);
    const f = await fields(page, 't-note');
    assert.deepEqual(f.map((x) => [x.name, x.inputType, String(x.value)]), [
      ['topic', 'text', ''], ['count', 'number', '3'], ['loud', 'checkbox', 'false'], ['style', 'select-one', 'short'],
    ]);
    assert.equal(f[0].maxLength, 200);
    assert.equal(f[1].min, '1');
    assert.equal(f[1].max, '10');
  });

  test('a run writes its note; the result and the last run are neutral', { timeout: T }, async () => {
    const c = '.mission-card[data-mission="t-note"]';
    await page.fill(inp(c, 'topic'), HOSTILE);
    await page.fill(inp(c, 'count'), '7');
    await page.check(inp(c, 'loud'));
    await page.selectOption(inp(c, 'style'), 'long');
    await page.click(`${c} button.run-mission`);
    await page.waitForSelector(`${c} .mission-result[data-state="done"]`, { timeout: 30000 });
    const r = `${c} .mission-result .run-facts`;
    assert.equal(await page.getAttribute(r, 'data-status'), 'success', await page.textContent(r));
    assert.match(await page.textContent(r), /1 note written/);
    assert.match(await page.textContent(r), /1 event emitted/);
    // The note holds the rendered prompt (the echo agent's answer) ...
    const dir = path.join(cordon.home, 'vault/00_Inbox/cordon/missions/t-note');
    const notes = readdirSync(dir).filter((n) => n.endsWith('.md'));
    // HINT-YYYY-MM-DD.md, the date in the mission's zone (UTC here).
    assert.equal(notes.length, 1, notes.join(', '));
    assert.match(notes[0], /^echo-\d{4}-\d{2}-\d{2}\.md$/);
    // The note is literal Markdown: its punctuation backslash-escaped (VA-5).
    const note = readFileSync(path.join(dir, notes[0]), 'utf8')
      .replace(/\\([!-/:-@[-`{-~])/g, '$1');
    assert.ok(note.includes(`Note about ${HOSTILE}, 7 lines, loud true, style long`), note);
    // ... and the page shows none of it.
    assert.equal(await page.locator('#view-dynamic img').count(), 0);
    assert.ok(!(await page.textContent('#view-dynamic')).includes('onerror'));
    await page.waitForSelector(`${c} .last-run[data-status="success"][data-trigger="manual"]`, { timeout: 10000 });
    // MI-4: the option value is in no audit record.
    const audit = path.join(cordon.home, 'audit');
    for (const f of readdirSync(audit))
      assert.ok(!readFileSync(path.join(audit, f), 'utf8').includes('onerror'), f);
  });

  test('the server decides what the page cannot check', { timeout: T }, async () => {
    const c = '.mission-card[data-mission="t-posix"]';
    await page.fill(inp(c, 'word'), 'abc1');
    await page.click(`${c} button.run-mission`);
    await page.waitForSelector(`${c} .mission-result[data-state="refused"]`, { timeout: 10000 });
    assert.equal(await page.getAttribute(`${c} .mission-result`, 'data-code'), 'mission-options-invalid');
    await page.fill(inp(c, 'word'), 'abc');
    await page.click(`${c} button.run-mission`);
    await page.waitForSelector(`${c} .mission-result[data-state="done"]`, { timeout: 30000 });
    assert.equal(await page.getAttribute(`${c} .run-facts`, 'data-status'), 'success');
  });

  test('an output without its permission: denied, nothing written', { timeout: T }, async () => {
    const c = '.mission-card[data-mission="t-denied"]';
    await page.click(`${c} button.run-mission`);
    await page.waitForSelector(`${c} .mission-result[data-state="done"]`, { timeout: 10000 });
    assert.equal(await page.getAttribute(`${c} .run-facts`, 'data-status'), 'denied');
    assert.equal(await page.getAttribute(`${c} .run-facts`, 'data-error-class'), 'permission-denied');
    assert.ok(!existsSync(path.join(cordon.home, 'vault/00_Inbox/cordon/missions/t-denied')));
    await page.screenshot({ path: outPath('missions-run.png'), fullPage: true });
    await page.screenshot({ path: outPath('missions-run.jpg'), type: 'jpeg', quality: 55 });
  });

  test('no CSP violation and no console error but the deliberate 400', { timeout: T }, async () => {
    assert.deepEqual(w.csp, []);
    assert.deepEqual(w.consoleErrors, []);
    assert.deepEqual(w.pageErrors, []);
    assert.equal(w.allowed.length, 1, w.allowed.join('\n'));
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
  });
});
