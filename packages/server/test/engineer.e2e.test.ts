/**
 * The engineer agent (issue 27, CONTRACT §12.6) end to end: a scripted OpenAI fake whose every tool call the
 * test decides from the conversation so far (the fail → fix → pass loop, containment, unknown tools, ceilings,
 * cancel during a `run`), and the sandbox model as an engineer, alone and in planner → engineer → reviewer.
 * The parts that run commands are skipped, saying so, where bubblewrap cannot run.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeToolCall, FakeVendor } from './fakes/fake-vendor.js';
import { registerUser, request } from './helpers/http.js';
import { nextIp, startTestServer, type TestServer } from './helpers/test-server.js';

const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping the engineer's sandbox tests: ${probe.reason}`);
const sandboxed = probe.available;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINISHED = ['succeeded', 'failed', 'cancelled'];
const tool = (name: string, args: unknown): FakeToolCall => ({ name, arguments: JSON.stringify(args) });

/** The tool messages of a request so far, oldest first. */
const toolResults = (body: any): string[] => (body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool').map((m) => m.content);

/** A scripted engineer: `plan(results)` gives the next call from the tool results so far. */
function scripted(plan: (results: string[]) => FakeToolCall | FakeToolCall[]) {
  return (body: any) => {
    const next = plan(toolResults(body));
    return { reply: '', toolCalls: Array.isArray(next) ? next : [next] };
  };
}

describe('the engineer agent', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let token: string;
  const dataDir = mkdtempSync(join(tmpdir(), 'codeloom-engineer-data-'));

  beforeAll(async () => {
    writeFileSync(join(dataDir, 'secret-marker.txt'), 'DATA-DIR-SECRET');
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DATA_DIR: dataDir, CODELOOM_VERIFY_TIMEOUT: '20' } });
    const user = await registerUser(t.url, { ip: nextIp() });
    token = user.token;
    // No per-minute windows: an engineer makes many model calls, and a free plan's would make the run wait a minute.
    await t.server.ctx.store.accounts.setPlanByEmail(user.email.toLowerCase(), 'enterprise');
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  const api = (path: string) => `${t.url}/api/v1${path}`;
  async function agent(config: Record<string, unknown> = {}, model = 'gpt-test'): Promise<string> {
    const res = await request(api('/agents'), { method: 'POST', token, body: { name: 'eng', model, config: { specialization: 'engineer', ...config } } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.type).toBe('engineer');
    return res.body.id;
  }
  async function execute(agentId: string, body: Record<string, unknown>): Promise<any> {
    const res = await request(api(`/agents/${agentId}/execute`), { method: 'POST', token, body });
    expect(res.status, res.text).toBe(202);
    return res.body;
  }
  async function poll(runId: string, until: (run: any) => boolean = (r) => FINISHED.includes(r.status), timeoutMs = 90_000): Promise<any> {
    for (const deadline = Date.now() + timeoutMs; ;) {
      const run = (await request(api(`/runs/${runId}`), { token })).body;
      if (until(run)) return run;
      if (Date.now() > deadline) throw new Error(`run stuck: ${JSON.stringify(run).slice(0, 500)}`);
      await sleep(700);
    }
  }
  /** The run's events as SSE replays them (a finished run: all of them, then the stream ends). */
  async function events(runId: string): Promise<Array<{ event: string; id: number; data: any }>> {
    const res = await fetch(api(`/runs/${runId}/events`), { headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    return text.split('\n\n').filter((b) => b.includes('event:')).map((b) => {
      const field = (name: string) => b.split('\n').find((l) => l.startsWith(`${name}:`))?.slice(name.length + 1).trim();
      const frame = JSON.parse(field('data') ?? 'null') as { seq: number; data: any };
      return { event: field('event')!, id: frame.seq, data: frame.data };
    });
  }

  it.skipIf(!sandboxed)('fail → fix → pass: writes a failing test, runs it, edits, runs again, finishes; tool events and result.changes', async () => {
    fake.script({
      reply: '',
      respond: scripted((results) => [
        tool('list_files', {}),
        tool('write_file', { path: 'calc.py', content: 'def add(a, b):\n    return a - b\n' }),
        tool('write_file', { path: 'test_calc.py', content: 'import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n' }),
        tool('run', { command: 'python3 -m unittest -v' }),
        tool('edit_file', { path: 'calc.py', old_text: 'return a - b', new_text: 'return a + b' }),
        tool('run', { command: 'python3 -m unittest -v && echo made > made.txt && rm -f calc.pyc' }),
        tool('finish', { summary: 'add() fixed; the test passes.' }),
      ][results.length]!),
    });
    const run = await poll((await execute(await agent(), { task: 'add two numbers', language: 'python' })).id);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result.changes.map((c: any) => [c.path, c.status])).toEqual([['calc.py', 'added'], ['made.txt', 'added'], ['test_calc.py', 'added']]);
    expect(run.result.changes[0].diff).toBe('--- /dev/null\n+++ b/calc.py\n@@ -0,0 +1,2 @@\n+def add(a, b):\n+    return a + b\n');
    expect(run.steps[0].output).toMatch(/^add\(\) fixed; the test passes\./);
    expect(run.steps[0].output).toMatch(/## Last run: `python3 -m unittest -v && .*` \(exit 0\)/);
    // The first run's failure reached the model as a tool result.
    const told = toolResults(fake.requests.at(-1)!.body);
    expect(told[3]).toMatch(/^\$ python3 -m unittest -v\n\[exit 1\]\n[\s\S]*AssertionError: -1 != 5/);
    expect(told[5]).toMatch(/\[exit 0\][\s\S]*OK/);
    const ev = await events(run.id);
    const tools = ev.filter((e) => e.event === 'tool_call' || e.event === 'tool_result');
    expect(tools.map((e) => `${e.event}:${e.data.name ?? e.data.ok}`)).toEqual([
      'tool_call:list_files', 'tool_result:true', 'tool_call:write_file', 'tool_result:true', 'tool_call:write_file', 'tool_result:true',
      'tool_call:run', 'tool_result:false', 'tool_call:edit_file', 'tool_result:true', 'tool_call:run', 'tool_result:true', 'tool_call:finish', 'tool_result:true',
    ]);
    expect(tools[6]!.data).toMatchObject({ step: 4, name: 'run', arguments: { command: 'python3 -m unittest -v' }, call_id: expect.any(String) });
    expect(tools[7]!.data).toMatchObject({ step: 4, call_id: tools[6]!.data.call_id, ok: false, duration_ms: expect.any(Number) });
    // Same seq numbering as the rest: strictly increasing ids, between step_started and complete.
    const ids = ev.map((e) => e.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(ev.findIndex((e) => e.event === 'step_started')).toBeLessThan(ev.indexOf(tools[0]!));
    expect(ev.at(-1)!.event).toBe('complete');
  }, 120_000);

  it.skipIf(!sandboxed)('containment: no network from run, host files and the data dir unreachable, workspace escapes refused, symlinks not followed', async () => {
    const commands = [
      'python3 -c "import socket; s=socket.create_connection((\'1.1.1.1\', 80), timeout=3)" && echo NET-OPEN || echo NET-CLOSED',
      `cat ${join(process.cwd(), 'package.json')} 2>&1 | head -c 200; echo; cat ${join(dataDir, 'secret-marker.txt')} 2>&1; ls ${dataDir} 2>&1; echo DONE`,
      'ln -s /etc/hostname host-link && ln -s / root-link && echo linked',
    ];
    fake.script({
      reply: '',
      respond: scripted((results) => [
        tool('run', { command: commands[0] }),
        tool('run', { command: commands[1] }),
        tool('run', { command: commands[2] }),
        tool('read_file', { path: 'host-link' }),
        tool('read_file', { path: 'root-link/etc/passwd' }),
        tool('write_file', { path: '../outside.txt', content: 'x' }),
        tool('write_file', { path: '/tmp/outside.txt', content: 'x' }),
        tool('finish', { summary: 'probed' }),
      ][results.length]!),
    });
    const run = await poll((await execute(await agent(), { task: 'probe', language: 'python' })).id);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    const told = toolResults(fake.requests.at(-1)!.body);
    expect(told[0]).toMatch(/^NET-CLOSED$/m);
    expect(told[0]).not.toMatch(/^NET-OPEN$/m);
    expect(told[1]).toMatch(/No such file or directory[\s\S]*No such file or directory[\s\S]*DONE/);
    expect(told[1]).not.toContain('DATA-DIR-SECRET');
    expect(told[1]).not.toContain('"workspaces"');
    expect(told[2]).toMatch(/linked[\s\S]*host-link: not kept[\s\S]*root-link: not kept|linked[\s\S]*root-link[\s\S]*not kept/);
    expect(told[3]).toMatch(/host-link: no such file/);
    expect(told[4]).toMatch(/no such file/);
    expect(told[5]).toMatch(/^Refused: path "..\/outside.txt" leaves the workspace/);
    expect(told[6]).toMatch(/^Refused: path "\/tmp\/outside.txt" is absolute/);
    expect(run.result.changes).toEqual([]);
  }, 120_000);

  it.skipIf(!sandboxed)('on a project: starts from its files, and its changes (a deletion too) become one project revision', async () => {
    const project = (await request(api('/projects'), { method: 'POST', token, body: { name: 'calc' } })).body;
    for (const [path, content] of [['calc.py', 'def add(a, b):\n    return a - b\n'], ['old.txt', 'remove me\n']]) {
      const put = await request(api(`/projects/${project.id}/files/${path}`), { method: 'PUT', token, body: { content } });
      expect(put.status, put.text).toBeLessThan(300);
    }
    const before = (await request(api(`/projects/${project.id}/revisions`), { token })).body.data.length;
    fake.script({
      reply: '',
      respond: scripted((results) => [
        tool('list_files', {}),
        tool('edit_file', { path: 'calc.py', old_text: 'a - b', new_text: 'a + b' }),
        tool('run', { command: 'rm old.txt' }),
        tool('finish', { summary: 'fixed' }),
      ][results.length]!),
    });
    const run = await poll((await execute(await agent(), { task: 'fix add', language: 'python', project_id: project.id })).id);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(toolResults(fake.requests.at(-1)!.body)[0]).toMatch(/^calc\.py \(\d+ bytes\)\nold\.txt/);
    expect(run.result.changes.map((c: any) => [c.path, c.status])).toEqual([['calc.py', 'modified'], ['old.txt', 'deleted']]);
    expect(run.result.changes[0].diff).toBe('--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n');
    const revisions = (await request(api(`/projects/${project.id}/revisions`), { token })).body.data;
    expect(revisions.length).toBe(before + 1);
    expect(revisions[0]).toMatchObject({ files_changed: 2, message: expect.stringMatching(/^Engineer run run_/) });
    const files = (await request(api(`/projects/${project.id}/files`), { token })).body.data.map((f: any) => f.path);
    expect(files).toEqual(['calc.py']);
    expect((await request(api(`/projects/${project.id}/files/calc.py`), { token })).body.content).toBe('def add(a, b):\n    return a + b\n');
  }, 120_000);

  it('unknown tools come back as failed results; the run goes on and finishes', async () => {
    fake.script({ reply: '', respond: scripted((results) => [tool('rm_rf', { path: '/' }), tool('finish', { summary: 'done' })][results.length]!) });
    const run = await poll((await execute(await agent(), { task: 'x', language: 'python' })).id);
    expect(run.status).toBe('succeeded');
    const ev = (await events(run.id)).filter((e) => e.event === 'tool_result');
    expect(ev[0]!.data).toMatchObject({ ok: false, output: expect.stringMatching(/^Unknown tool "rm_rf"/) });
    // The model was offered exactly the engineer's tools.
    expect(fake.requests.at(-1)!.body.tools.map((t: any) => t.function.name)).toEqual(['list_files', 'read_file', 'write_file', 'edit_file', 'search', 'run', 'finish']);
  });

  it('max_steps ends the run failed with max_steps_reached', async () => {
    fake.script({ reply: '', respond: () => ({ reply: '', toolCalls: [tool('list_files', {})] }) });
    const before = fake.requests.length;
    const run = await poll((await execute(await agent({ max_steps: 3 }), { task: 'x', language: 'python' })).id);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'max_steps_reached', message: expect.stringMatching(/3 steps/) });
    expect(fake.requests.length - before).toBe(3);
  });

  it('max_tokens ends the run failed with budget_exceeded before the step that would cross it', async () => {
    fake.script({ reply: '', respond: () => ({ reply: '', toolCalls: [tool('list_files', {})] }) });
    const before = fake.requests.length;
    const run = await poll((await execute(await agent({ max_tokens: 20_000, max_steps: 200 }), { task: 'x', language: 'python' })).id);
    expect(run.status).toBe('failed');
    expect(run.error.code).toBe('budget_exceeded');
    expect(run.tokens_used).toBeLessThanOrEqual(20_000);
    // Several steps ran before the ceiling stopped the loop.
    expect(fake.requests.length - before).toBeGreaterThan(2);
    expect(run.steps[0].tokens_used).toBe(run.tokens_used);
  });

  it('the wall time (config.max_wall_seconds) ends the run failed with run_timeout, the model call aborted', async () => {
    fake.script({ reply: '', hang: true });
    const aborts = fake.aborts;
    const started = Date.now();
    const run = await poll((await execute(await agent({ max_wall_seconds: 1 }), { task: 'x', language: 'python' })).id);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'run_timeout', message: expect.stringMatching(/wall time of 1 s/) });
    expect(Date.now() - started).toBeLessThan(10_000);
    await fake.waitForAborts(aborts + 1);
    fake.script({ reply: '', hang: false });
  });

  it.skipIf(!sandboxed)('cancel during a run kills the sandbox at once', async () => {
    let served = false;
    fake.script({ reply: '', respond: scripted((results) => { served = true; return [tool('run', { command: 'sleep 60; echo never' }), tool('finish', { summary: 'x' })][results.length]!; }) });
    const queued = await execute(await agent(), { task: 'x', language: 'python' });
    // Wait for the `run` call to be answered, then give the sandbox a moment to start.
    for (const deadline = Date.now() + 30_000; !served;) {
      if (Date.now() > deadline) throw new Error(`no model call: ${JSON.stringify((await request(api(`/runs/${queued.id}`), { token })).body).slice(0, 600)}`);
      await sleep(100);
    }
    await sleep(1_500);
    const started = Date.now();
    const res = await request(api(`/runs/${queued.id}/cancel`), { method: 'POST', token });
    expect(res.status).toBe(200);
    const run = await poll(queued.id, (r) => FINISHED.includes(r.status), 10_000);
    expect(run.status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await events(queued.id)).some((e) => e.event === 'tool_result')).toBe(false);
  }, 60_000);
});

describe('the sandbox model as an engineer', () => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer();
    const user = await registerUser(t.url, { ip: nextIp() });
    token = user.token;
    await t.server.ctx.store.accounts.setPlanByEmail(user.email.toLowerCase(), 'enterprise');
  });
  afterAll(async () => { await t?.close(); });
  const api = (path: string) => `${t.url}/api/v1${path}`;
  const poll = async (id: string) => {
    for (const deadline = Date.now() + 90_000; ;) {
      const run = (await request(api(`/runs/${id}`), { token })).body;
      if (FINISHED.includes(run.status)) return run;
      if (Date.now() > deadline) throw new Error(`stuck: ${JSON.stringify(run).slice(0, 1500)}`);
      await sleep(700);
    }
  };

  it('lists, writes its template files, runs their checks and finishes, deterministically', async () => {
    const made = await request(api('/agents'), { method: 'POST', token, body: { name: 'eng', model: 'sandbox', config: { specialization: 'engineer' } } });
    const exec = await request(api(`/agents/${made.body.id}/execute`), { method: 'POST', token, body: { task: 'a CLI to track expenses', language: 'python' } });
    const run = await poll(exec.body.id);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    const changes = run.result.changes as Array<{ path: string; status: string; diff: string }>;
    expect(changes.length).toBeGreaterThan(1);
    expect(changes.every((c) => c.status === 'added' && c.diff.startsWith(`--- /dev/null\n+++ b/${c.path}\n`))).toBe(true);
    expect(changes.some((c) => /test/.test(c.path))).toBe(true);
    expect(run.steps[0].output).toMatch(sandboxed ? /and ran the checks: they pass/ : /they did not pass/);
    expect(run.steps[0].output).toMatch(/## Last run: `/);
    // Same task, same files.
    const again = await poll((await request(api(`/agents/${made.body.id}/execute`), { method: 'POST', token, body: { task: 'a CLI to track expenses', language: 'python' } })).body.id);
    expect(again.result.changes).toEqual(run.result.changes);
  }, 120_000);

  it('planner → engineer → reviewer: the reviewer sees the real diff and the last run, and [review:changes] sends the work back', async () => {
    const wf = await request(api('/agents/create'), { method: 'POST', token, body: { name: 'team', agents: ['planner', 'engineer', 'reviewer'].map((type) => ({ type, model: 'sandbox' })), config: { max_iterations: 1 } } });
    expect(wf.status, wf.text).toBe(201);
    const exec = await request(api(`/workflows/${wf.body.id}/execute`), { method: 'POST', token, body: { task: 'a CLI to track expenses [review:changes=1]', language: 'python' } });
    const run = await poll(exec.body.id);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.steps.map((s: any) => [s.agent, s.iteration, s.verdict ?? null])).toEqual([
      ['planner', 0, null], ['engineer', 0, null], ['reviewer', 0, 'changes_requested'], ['engineer', 1, null], ['reviewer', 1, 'approve'],
    ]);
    const review = run.steps[2].output as string;
    expect(review).not.toMatch(/No code to review yet/);
    const firstWritten = (run.steps[1].changes as Array<{ path: string }>).map((c) => c.path);
    // It names files the engineer really wrote.
    expect(firstWritten.some((p) => review.includes(`${p}:`))).toBe(true);
    expect(run.result.changes.length).toBeGreaterThan(0);
  }, 180_000);
});

describe('the engineer under max_cost_usd and a short command timeout', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_MODEL_PRICES: JSON.stringify({ 'gpt-test': { input: 100, output: 100 } }), CODELOOM_VERIFY_TIMEOUT: '2' } });
    const user = await registerUser(t.url, { ip: nextIp() });
    token = user.token;
    await t.server.ctx.store.accounts.setPlanByEmail(user.email.toLowerCase(), 'enterprise');
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('ends the run failed with budget_exceeded, its cost within the ceiling', async () => {
    fake.script({ reply: '', respond: () => ({ reply: '', toolCalls: [tool('list_files', {})] }) });
    const made = await request(`${t.url}/api/v1/agents`, { method: 'POST', token, body: { name: 'eng', model: 'gpt-test', config: { specialization: 'engineer', max_cost_usd: 0.5, max_steps: 200 } } });
    const exec = await request(`${t.url}/api/v1/agents/${made.body.id}/execute`, { method: 'POST', token, body: { task: 'x', language: 'python' } });
    let run: any;
    for (const deadline = Date.now() + 60_000; ;) {
      run = (await request(`${t.url}/api/v1/runs/${exec.body.id}`, { token })).body;
      if (FINISHED.includes(run.status) || Date.now() > deadline) break;
      await sleep(300);
    }
    expect(run.status).toBe('failed');
    expect(run.error.code).toBe('budget_exceeded');
    expect(fake.requests.length).toBeGreaterThan(2);
    expect(run.cost_usd).toBeGreaterThan(0);
    expect(run.cost_usd).toBeLessThanOrEqual(0.5);
  }, 90_000);

  it.skipIf(!sandboxed)('a command past the verification timeout is killed; its result says so and the loop goes on', async () => {
    fake.script({ reply: '', respond: scripted((results) => [tool('run', { command: 'echo started; sleep 30; echo never' }), tool('finish', { summary: 'x' })][results.length]!) });
    const made = await request(`${t.url}/api/v1/agents`, { method: 'POST', token, body: { name: 'eng', model: 'gpt-test', config: { specialization: 'engineer' } } });
    const started = Date.now();
    const exec = await request(`${t.url}/api/v1/agents/${made.body.id}/execute`, { method: 'POST', token, body: { task: 'x', language: 'python' } });
    let run: any;
    for (const deadline = Date.now() + 60_000; ;) {
      run = (await request(`${t.url}/api/v1/runs/${exec.body.id}`, { token })).body;
      if (FINISHED.includes(run.status) || Date.now() > deadline) break;
      await sleep(300);
    }
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(Date.now() - started).toBeLessThan(20_000);
    const told = toolResults(fake.requests.at(-1)!.body)[0]!;
    expect(told).toMatch(/^\$ echo started; sleep 30; echo never\n\[killed \(time limit: 2000 ms\), exit 137\]\nstarted/);
    expect(told).not.toMatch(/^never$/m);
  }, 60_000);
});
