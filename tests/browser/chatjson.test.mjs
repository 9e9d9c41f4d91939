// Codex's and Gemini CLI's tool events in the dashboard's chat view
// (API-3, SP-16, DA-1), against a real `cordon run --home`: a fake CLI
// (tests/fake-agents/jsonlcli) prints the JSONL of `codex exec --json`
// and of `gemini --output-format stream-json` for a turn with a shell
// call that succeeds and a tool call refused by the gate, through the
// codexJson and geminiJson transports.  Each shows as tool calls with
// their outcome in words and their result, between the texts, like
// Claude Code's do, markup as text, at 1280 px and at a 390 px phone
// width without horizontal overflow.  127.0.0.1 only.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  HERE, startCordon, launchBrowser, watch, outPath, withTimeout,
} from './harness.mjs';

const T = 60000;
const CLI = path.resolve(HERE, '../fake-agents/jsonlcli');

const manifest = (name, transport) => `name: ${name}
displayName: Fake ${name}
transport: ${transport}
transportConfig:
  bin: ${CLI}
  args: ["${name}", "--", "{prompt}"]
  timeoutMs: 60000
`;

// What each CLI's turn shows: [state, tool, input, status, result].
const WANT = {
  codex: {
    steps: [
      ['ok', 'Bash', 'ls -la <b>x</b>', '✓ ok', 'a.txt\n<img src=x>\n'],
      ['failed', 'Bash', 'cat ~/.ssh/id_rsa', '✗ failed', 'cordon gate: refused'],
    ],
    text: 'Running it.||\n\nDone.',
  },
  gemini: {
    steps: [
      ['ok', 'run_shell_command', 'ls -la <b>x</b>', '✓ ok', 'a.txt\n<img src=x>'],
      ['failed', 'read_file', '/w/a', '✗ failed', 'cordon gate: refused'],
    ],
    text: 'Running it.||\n\nDone.',
  },
};

let cordon;
let browser;
let ctx;
let w;
let page;

before(async () => {
  cordon = await startCordon({
    files: {
      'agents/codex.yaml': manifest('codex', 'codexJson'),
      'agents/gemini.yaml': manifest('gemini', 'geminiJson'),
    },
  });
  browser = await launchBrowser();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 844 } });
  w = await watch(ctx);
  page = await ctx.newPage();
  await page.goto(cordon.loginUrl, { waitUntil: 'load', timeout: 10000 }); // once: the code is one-time
}, { timeout: T });

after(async () => {
  await withTimeout(browser?.close() ?? Promise.resolve(), 10000, 'closing chromium').catch(() => {});
  await cordon?.kill();
}, { timeout: T });

const shown = (page) => page.$$eval('.msg-agent .msg-text > .tool', (ns) => ns.map((n) => [
  n.dataset.state, n.querySelector('.tool-name').textContent, n.querySelector('.tool-input').textContent,
  n.querySelector('.tool-status').textContent, n.querySelector('.tool-summary')?.textContent ?? null]));

for (const width of [1280, 390]) {
  for (const agent of ['codex', 'gemini']) {
    test(`API-3/SP-16: ${agent}'s tool calls show with their results at ${width} px`, { timeout: T }, async () => {
      await page.setViewportSize({ width, height: 844 });
      await page.evaluate((a) => { location.hash = `agent/${a}`; }, agent);
      await page.waitForSelector('#prompt', { timeout: 10000 });
      await page.click('button.new-session');
      await page.fill('#prompt', 'use tools');
      await page.click('button.send');
      await page.waitForSelector('.msg-agent[data-state="done"]', { timeout: 20000 });
      assert.deepEqual(await shown(page), WANT[agent].steps);
      // Each call sits where it came: the text before it, then after.
      const text = await page.$eval('.msg-agent .msg-text', (b) => [...b.childNodes]
        .map((n) => (n.nodeType === 3 ? n.data : '|')).join(''));
      assert.equal(text, WANT[agent].text);
      assert.equal(await page.locator('.chat-log b, .chat-log img').count(), 0, 'tool strings are text');
      // A result is folded until asked for.
      assert.equal(await page.isVisible('.tool-summary >> nth=1'), false);
      await page.click('.tool-result summary >> nth=1');
      assert.equal(await page.isVisible('.tool-summary >> nth=1'), true);
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth),
        'no horizontal overflow');
      await page.screenshot({ path: outPath(`chat-${agent}-${width}.png`), fullPage: true });
    });
  }
}

test('DA-3: no CSP violation, no page error', { timeout: T }, async () => {
  assert.deepEqual(w.csp, []);
  assert.deepEqual(w.pageErrors, []);
});
