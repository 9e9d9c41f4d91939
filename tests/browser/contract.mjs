// A scripted stand-in for the broker's API, for testing the dashboard's
// own logic (DA-2 generations, NDJSON lines split across chunks, fail-soft
// action errors, Markdown safety) independently of which daemons are
// built.  It serves broker/web/ under /ui/ with the broker's CSP and
// answers the SPEC.md API-2 ... API-8 shapes.  Never a stand-in for cordon
// itself: dashboard.test.mjs runs the real thing.  127.0.0.1 only.

import http from 'node:http';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { HERE } from './harness.mjs';

const WEB = path.resolve(HERE, '../../broker/web');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml' };

export const AGENT = {
  name: 'demo',
  displayName: 'Demo agent',
  description: 'A scripted agent.',
  transport: 'subprocess',
  actions: [
    { id: 'hello', label: 'Say hello', hint: 'echo' },
    { id: 'slow', label: 'Too slow', hint: 'times out' },
    { id: 'flood', label: 'Flood', hint: 'truncated' },
  ],
  readiness: { status: 'live', version: 'demo 1.0' },
  missingSecrets: [],
  hasKey: { DEMO_API_KEY: true },
};

// An agent whose first health probe has not answered yet (SP-18).
export const FRESH = {
  name: 'fresh', displayName: 'Fresh agent', description: 'Not probed yet.',
  transport: 'subprocess', actions: [],
  readiness: { status: 'offline', probed: false, version: null },
  missingSecrets: [], hasKey: {},
};

const NOTES = {
  'Welcome.md': '# Welcome\n\nA [[Hostile]] note sits beside me.\n',
  'Hostile.md': '# Hostile <b>x</b>\n\n<script>window.__pwned=1</script>\n[js](javascript:window.__pwned=2) [out](http://127.0.0.1:9/) [in](Welcome.md)\n',
  '00_Inbox/cordon/chats/2026-01-01-0000-demo-0badc0de.md': '---\ntype: chat\n---\n# hello\n\n## response\n\nHi.\n',
};

function csp(nonce) {
  return `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'self' 'nonce-${nonce}'; ` +
    "img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
}

function json(res, status, o) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(o));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function body(req) {
  return new Promise((resolve) => {
    let b = '';
    req.on('data', (d) => { b += d; });
    req.on('end', () => {
      try {
        resolve(JSON.parse(b));
      } catch {
        resolve(null);
      }
    });
  });
}

function listing(dir) {
  const pre = dir ? `${dir}/` : '';
  const notes = new Set();
  const folders = new Set();
  for (const p of Object.keys(NOTES)) {
    if (!p.startsWith(pre)) continue;
    const rest = p.slice(pre.length).split('/');
    (rest.length === 1 ? notes : folders).add(rest[0]);
  }
  return { ok: true, dir, notes: [...notes], folders: [...folders] };
}

// notImplemented: every API route but health answers 501, as the broker
// does for a handler not written yet.
// egress: the demo agent is a `network: proxy` one (EG-1, EG-2) and a
// prompt with "net" streams its connections (EG-4), one held open until
// the test calls releaseConn().
// approvals: SBX-7 held commands, {id, agent, runId, verb, rule, cwd, args,
// created, expires} (times in ms since the epoch); the test adds and removes
// entries.  skewMs: how far the server's clock ("now") is off the browser's.
export async function startContract({ notImplemented = false, skewMs = 0, egress = false } = {}) {
  const runs = new Map(); // runId -> {cancelled}
  const agent = !egress ? AGENT : {
    ...AGENT,
    sandbox: {
      isolation: 'namespace', network: 'proxy', enforced: true, layers: ['landlock', 'seccomp'],
      egress: { allow: ['api.anthropic.com:443', '*.example-long-subdomain-name.org:8443'],
        maxConnections: 16, maxBytes: 1073741824, idleTimeoutSec: 300 },
    },
  };
  let releaseConn = () => {};
  const approvals = [];
  const decisions = []; // [id, decision] answered through POST
  const stale = new Set(); // ids listed but answered 404 (decided elsewhere)
  const log = []; // API requests seen: "METHOD path"
  // API-7: the list GET /api/missions answers (the test fills it), the
  // answer per mission id to POST .../run ({status, body, delayMs?}), and
  // every run request seen as [rawId, parsed body].
  const missions = [];
  const missionAnswers = new Map();
  const missionRuns = [];
  let seq = 0;

  async function run(req, res, prompt) {
    const runId = `r${++seq}`;
    const st = { cancelled: false };
    runs.set(runId, st);
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store' });
    const line = (o) => res.write(`${JSON.stringify(o)}\n`);
    line({ kind: 'start', runId });
    // One object split across two chunks, and two objects in one chunk.
    const half = JSON.stringify({ kind: 'token', text: 'Hello, ' });
    res.write(half.slice(0, 9));
    await sleep(60);
    res.write(`${half.slice(9)}\n${JSON.stringify({ kind: 'token', text: 'wörld<b>!</b>' })}\n`);
    // API-3 tool calls, a result of each outcome, one call left waiting,
    // and a notice; then a failure with its reason.
    const tools = prompt.includes('tools');
    if (tools) {
      line({ kind: 'tool', id: 't1', tool: 'Bash', input: 'ls -la <b>x</b>' });
      line({ kind: 'tool_result', id: 't1', ok: true, summary: 'a.txt\n<img src=x>' });
      line({ kind: 'token', text: '\n\nNext.' });
      line({ kind: 'tool', id: 't2', tool: 'Read', input: '~/notes.txt' });
      line({ kind: 'tool_result', id: 't2', ok: false, summary: 'EACCES' });
      line({ kind: 'notice', text: 'the agent is retrying its model API (attempt 1 of 10: no connection)' });
      line({ kind: 'tool', id: 't3', tool: 'Grep', input: '{"pattern":"x"}' });
    }
    // EG-4: what egressd reports of each connection, as the stream
    // carries it: one denied (unlisted: no host), one opened and held.
    if (egress && prompt.includes('net')) {
      line({ kind: 'egress', conn: 1, state: 'end', decision: 'deny', reason: 'host-not-allowed',
        bytesUp: 0, bytesDown: 0, durationMs: 1 });
      line({ kind: 'egress', conn: 2, state: 'open', host: 'api.anthropic.com', port: 443,
        decision: 'allow', rule: 'allow.0', bytesUp: 0, bytesDown: 0, durationMs: 12 });
      await new Promise((r) => { releaseConn = r; });
      line({ kind: 'egress', conn: 2, state: 'end', host: 'api.anthropic.com', port: 443,
        decision: 'allow', rule: 'allow.0', end: 'closed', bytesUp: 2048, bytesDown: 1536000,
        durationMs: 2345 });
    }
    const long = prompt.includes('long');
    for (let i = 0; i < (long ? 400 : 5) && !res.destroyed; i++) {
      await sleep(50);
      line({ kind: 'token', text: ` t${i}` });
      // A cancelled run still sends a few tokens before it ends.
      if (st.cancelled && (st.after = (st.after || 0) + 1) > 4) break;
    }
    if (res.destroyed) return;
    line({ kind: 'usage', inputTokens: 12, outputTokens: 34 });
    if (st.cancelled) line({ kind: 'error', errorClass: 'killed', errorMessage: 'The run was stopped.' });
    if (tools) {
      line({ kind: 'error', errorClass: 'non-zero-exit', errorMessage: 'The agent exited with an error.',
        reason: "the agent could not reach its model API: this agent's sandbox has network: none" });
    }
    line({ kind: 'done', exitCode: st.cancelled ? 143 : 0, durationMs: 321, truncated: false });
    if (!st.cancelled && !tools) line({ kind: 'saved', path: '00_Inbox/cordon/chats/2026-01-01-0000-demo-0badc0de.md', bytes: 99 });
    runs.delete(runId);
    res.end();
  }

  const srv = http.createServer(async (req, res) => {
    const u = new URL(req.url, 'http://x');
    const p = u.pathname;
    if (p.startsWith('/ui/')) {
      const name = p === '/ui/' ? 'index.html' : p.slice(4);
      if (!/^[a-z]+\.(html|js|css|svg)$/.test(name)) return json(res, 404, { ok: false, error: 'not-found' });
      let data;
      try {
        data = readFileSync(path.join(WEB, name), 'utf8');
      } catch {
        return json(res, 404, { ok: false, error: 'not-found' });
      }
      const nonce = randomBytes(16).toString('hex');
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(name)],
        'Content-Security-Policy': csp(nonce),
        'X-Content-Type-Options': 'nosniff',
      });
      return res.end(data.replaceAll('{{NONCE}}', nonce));
    }
    log.push(`${req.method} ${p}`);
    if (req.method === 'POST') {
      // What the broker checks (PER-7, PER-8): the page must send these.
      const ref = req.headers.referer || '';
      if (!ref.includes('/ui/')) return json(res, 403, { ok: false, error: 'forbidden-referer' });
      if (req.headers['content-type'] !== 'application/json')
        return json(res, 415, { ok: false, error: 'unsupported-media-type' });
    }
    if (req.method === 'GET' && p === '/api/health')
      return json(res, 200, { ok: true, version: 'contract', daemons: [] });
    if (notImplemented && p.startsWith('/api/'))
      return json(res, 501, { ok: false, error: 'not-implemented' });
    if (req.method === 'GET' && p === '/api/agents') return json(res, 200, { ok: true, agents: [agent, FRESH] });
    if (req.method === 'GET' && p === '/api/agents/demo') return json(res, 200, { ok: true, agent });
    if (req.method === 'GET' && p.startsWith('/api/agents/'))
      return json(res, 404, { ok: false, error: 'unknown-agent' });
    if (req.method === 'POST' && p === '/api/agents/demo/run') {
      const b = await body(req);
      if (!b || typeof b.prompt !== 'string' || typeof b.session !== 'string')
        return json(res, 400, { ok: false, error: 'invalid-body' });
      return run(req, res, b.prompt);
    }
    let m;
    if (req.method === 'POST' && (m = /^\/api\/runs\/([^/]+)\/cancel$/.exec(p))) {
      const st = runs.get(m[1]);
      if (!st) return json(res, 404, { ok: false, error: 'unknown-run' });
      st.cancelled = true;
      return json(res, 200, { ok: true });
    }
    if (req.method === 'POST' && (m = /^\/api\/agents\/demo\/actions\/([^/]+)$/.exec(p))) {
      if (m[1] === 'hello')
        return json(res, 200, { ok: true, stdout: 'hello <b>world</b>\n', stderr: '', exitCode: 0, durationMs: 4, truncated: false });
      if (m[1] === 'slow')
        return json(res, 200, { ok: false, errorClass: 'timeout', errorMessage: 'The action took too long and was stopped.' });
      if (m[1] === 'flood')
        return json(res, 200, { ok: true, stdout: 'y\n'.repeat(2000), stderr: '', exitCode: -9, durationMs: 80, truncated: true });
      return json(res, 404, { ok: false, error: 'unknown-action' });
    }
    if (req.method === 'GET' && p === '/api/approvals')
      return json(res, 200, { ok: true, approvals, now: Date.now() + skewMs });
    if (req.method === 'POST' && (m = /^\/api\/approvals\/([0-9a-f]{16})$/.exec(p))) {
      const b = await body(req);
      if (!b || (b.decision !== 'allow' && b.decision !== 'deny') || Object.keys(b).length !== 1)
        return json(res, 400, { ok: false, error: 'invalid-body' });
      const i = approvals.findIndex((a) => a.id === m[1]);
      if (i === -1 || stale.has(m[1])) return json(res, 404, { ok: false, error: 'unknown-approval' });
      approvals.splice(i, 1);
      decisions.push([m[1], b.decision]);
      return json(res, 200, { ok: true });
    }
    if (req.method === 'GET' && p === '/api/vault/notes') return json(res, 200, listing(u.searchParams.get('dir') || ''));
    if (req.method === 'GET' && p === '/api/vault/note') {
      const n = u.searchParams.get('path');
      if (!Object.hasOwn(NOTES, n)) return json(res, 404, { ok: false, error: 'not-found' });
      return json(res, 200, { ok: true, path: n, content: NOTES[n], bytes: NOTES[n].length });
    }
    if (req.method === 'GET' && p === '/api/audit') {
      const kind = u.searchParams.get('kind');
      const recs = [
        { ts: '2026-01-01T00:00:01.000Z', id: 'a1', kind: 'http.request', method: 'GET', route: '/api/agents', status: 200 },
        { ts: '2026-01-01T00:00:02.000Z', id: 'a2', kind: 'agent.invoke', agent: 'demo', promptChars: 5 },
      ].filter((r) => !kind || r.kind === kind);
      return json(res, 200, { ok: true, records: recs });
    }
    if (req.method === 'GET' && p === '/api/missions') return json(res, 200, { ok: true, missions });
    if (req.method === 'POST' && (m = /^\/api\/missions\/([^/]+)\/run$/.exec(p))) {
      const b = await body(req);
      missionRuns.push([m[1], b]);
      const ans = missionAnswers.get(m[1]);
      if (!ans) return json(res, 404, { ok: false, error: 'mission-not-found' });
      if (ans.delayMs) await sleep(ans.delayMs);
      return json(res, ans.status, ans.body);
    }
    return json(res, 404, { ok: false, error: 'not-found' });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${srv.address().port}`;
  return {
    base,
    log,
    runs,
    approvals,
    decisions,
    stale,
    missions,
    missionAnswers,
    missionRuns,
    releaseConn: () => releaseConn(),
    close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(r); }),
  };
}
