// `cordon mcp` (MC-1) driven by the official MCP TypeScript SDK's client
// over stdio, as an agent CLI drives it: the handshake, tools/list,
// list_agents and run_agent with progress notifications, and a detached
// job started, awaited and read (MC-3).  A client
// cordon did not write, against a real cordon with the demo agent.
// Needs a built tree (CORDON_BUILD) and root; talks to 127.0.0.1 only.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startCordon, BUILD, withTimeout } from './harness.mjs';

const T = 30000;
let cordon;
let client;

before(async () => {
  cordon = await startCordon({ demo: true });
  client = new Client({ name: 'cordon-test', version: '1' });
  await withTimeout(client.connect(new StdioClientTransport({
    command: path.join(BUILD, 'cordon'),
    args: ['mcp', '--home', cordon.home],
    stderr: 'pipe',
  })), T, 'connecting the SDK client');
});

after(async () => {
  if (client) await client.close();
  if (cordon) await cordon.stop();
});

test('MC-1: the SDK client sees every tool with strict schemas', { timeout: T }, async () => {
  const { tools } = await client.listTools();
  const by = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.deepEqual(Object.keys(by).sort(), ['cancel_job', 'job_events', 'job_status',
    'list_agents', 'list_jobs', 'run_agent', 'start_job', 'wait_job']);
  for (const t of tools) assert.equal(t.inputSchema.additionalProperties, false);
  assert.equal(client.getServerVersion().name, 'cordon');
});

test('MC-1: list_agents and run_agent through the SDK', { timeout: T }, async () => {
  const list = await client.callTool({ name: 'list_agents', arguments: {} });
  assert.equal(list.isError, false);
  assert.ok(list.structuredContent.agents.some((a) => a.name === 'demo'));

  const progress = [];
  const run = await client.callTool(
    { name: 'run_agent', arguments: { agent: 'demo', prompt: 'hello from the SDK' } },
    undefined, { onprogress: (p) => progress.push(p), timeout: T });
  assert.equal(run.isError, false, JSON.stringify(run));
  assert.ok(run.structuredContent.text.length > 0);
  assert.equal(run.content[0].text, run.structuredContent.text);
  assert.equal(run.structuredContent.exitCode, 0);
  assert.ok(progress.length > 0, 'no progress notification');
  assert.equal(progress.map((p) => p.message).join(''), run.structuredContent.text);
});

test('MC-1: the SDK gets a JSON-RPC error for an unknown tool and bad arguments', { timeout: T }, async () => {
  for (const req of [
    { name: 'no_such_tool', arguments: {} },
    { name: 'run_agent', arguments: { agent: 'demo', prompt: 'x', extra: 1 } },
  ]) {
    await assert.rejects(client.callTool(req), (e) => e instanceof McpError && e.code === -32602);
  }
});

test('MC-3: a detached job through the SDK: start, wait, read', { timeout: T }, async () => {
  const started = await client.callTool({ name: 'start_job', arguments: { agent: 'demo', prompt: 'a job from the SDK' } });
  assert.equal(started.isError, false, JSON.stringify(started));
  const { jobId } = started.structuredContent;
  assert.match(jobId, /^[A-Za-z0-9_-]{1,80}$/);
  const waited = await client.callTool({ name: 'wait_job', arguments: { jobId, timeoutMs: 20000 } },
    undefined, { timeout: T });
  assert.equal(waited.structuredContent.timedOut, false);
  assert.equal(waited.structuredContent.job.state, 'succeeded');
  const read = await client.callTool({ name: 'job_events', arguments: { jobId, offset: 0 } });
  const kinds = read.structuredContent.events.map((e) => e.kind);
  assert.equal(kinds[0], 'start');
  assert.ok(kinds.includes('done'), kinds.join(','));
  await assert.rejects(client.callTool({ name: 'job_events', arguments: { jobId: '../x' } }),
    (e) => e instanceof McpError && e.code === -32602);
});
