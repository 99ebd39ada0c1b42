/**
 * Verified generation over the real interface: POST /api/v1/generate with `verify` runs the answer's checks
 * in the bubblewrap sandbox. The sandbox model's projects pass with their test counts (JSON, SSE and the
 * WebSocket channel, with verify_* events); with the OpenAI fake upstream a wrong answer fails with the
 * failing test's output, `repair: 1` sends the failure back and passes after 2 attempts (both calls charged),
 * and code that reaches for the network or the server's files fails its checks while the server stays healthy.
 * Skipped, saying so, where bubblewrap cannot run.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { registerUser, request } from './helpers/http.js';
import { readSse } from './helpers/sse.js';
import { nextIp, startTestServer, type TestServer } from './helpers/test-server.js';
import { connect } from './helpers/ws-client.js';
import { awayFromWindowEnd } from './helpers/limit-windows.js';

const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping the verified-generation tests: ${probe.reason}`);

const CALC_TEST = 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_negative():\n    assert add(-2, -3) == -5\n';
const BROKEN = `Here is the module.\n\n\`\`\`python calc.py\ndef add(a, b):\n    return a - b\n\`\`\`\n\n\`\`\`python tests/test_calc.py\n${CALC_TEST}\`\`\`\n`;
const FIXED = 'Fixed: it subtracted.\n\n```python calc.py\ndef add(a, b):\n    return a + b\n```\n';

describe.skipIf(!probe.available)('POST /generate with verify', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let token: string;
  let dataDir: string;

  beforeAll(async () => {
    fake = await startOpenAIFake();
    dataDir = mkdtempSync(join(tmpdir(), 'codeloom-data-'));
    writeFileSync(join(dataDir, 'server-secret.txt'), 'do not read');
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox', CODELOOM_DATA_DIR: dataDir, CODELOOM_VERIFY_TIMEOUT: '120', CODELOOM_VERIFY_CPU_SECONDS: '10', CODELOOM_VERIFY_MEMORY_MB: '512', CODELOOM_VERIFY_OUTPUT_LIMIT: '1000000' } });
  });
  // Each test (and each language of the first) on an account of its own: a free plan's 20,000 tokens a minute hold a few sandbox projects.
  beforeEach(async () => { token = await fresh(); });
  const fresh = async () => (await registerUser(t.url, { ip: nextIp() })).token;
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const generate = (body: Record<string, unknown>, as = token) => request(`${t.url}/api/v1/generate`, { method: 'POST', token: as, body });

  it('the sandbox model\'s projects pass their checks, with test counts, and the verdict is kept with the generation', async () => {
    const cases: Array<[string, string, boolean?]> = [
      ['typescript', 'library for parsing invoices', false],
      ['typescript', 'library for managing strings'], ['javascript', 'library for managing recipes'], ['python', 'CLI to track expenses'],
      ['bash', 'script to track expenses'], ['c', 'CLI to track expenses'], ['rust', 'library for managing strings'], ['java', 'CLI to track expenses'],
    ];
    const tokens = await Promise.all(cases.map(() => fresh()));
    const answers = await Promise.all(cases.map(([language, prompt], i) => generate({ prompt, language, context: { includeTests: cases[i]![2] ?? true }, verify: true }, tokens[i])));
    for (const [i, res] of answers.entries()) {
      const v = res.body.verification;
      const report = `${cases[i]!.join(': ')}\n${JSON.stringify(v, null, 1).slice(0, 4000)}`;
      expect(res.status, report).toBe(200);
      expect(v.status, report).toBe('passed');
      if (cases[i]![2] !== false) expect(v.tests.passed, report).toBeGreaterThan(0);
      expect(v.tests.failed, report).toBe(0);
      expect(v.attempts).toBe(1);
      expect(v.history).toHaveLength(1);
      expect(v.checks.every((c: { exit_code: number }) => c.exit_code === 0), report).toBe(true);
    }
    const saved = await request(`${t.url}/api/v1/generations/${answers[0]!.body.id}`, { token: tokens[0] });
    expect(saved.body.verification).toEqual(answers[0]!.body.verification);
  }, 240_000);

  it('streams verify_started, verify_output and verify_completed over SSE before complete', async () => {
    const res = await fetch(`${t.url}/api/v1/generate`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'library for managing recipes', language: 'javascript', context: { includeTests: true }, stream: true, verify: { repair: 0, timeout_s: 60 } }),
    });
    const frames = await readSse(res);
    const names = frames.map((f) => f.event);
    expect(names.filter((n) => n !== 'token' && n !== 'verify_output')).toEqual(['verify_started', 'verify_completed', 'complete']);
    expect(names.indexOf('verify_output')).toBeGreaterThan(names.indexOf('verify_started'));
    expect(frames.find((f) => f.event === 'verify_started')!.frame.data.checks).toEqual(['syntax', 'test']);
    const completed = frames.find((f) => f.event === 'verify_completed')!.frame.data;
    expect(completed).toMatchObject({ attempt: 1, status: 'passed' });
    expect(frames.at(-1)!.frame.data.verification.status).toBe('passed');
  }, 60_000);

  it('sends verify events on the WebSocket channel for a generate frame with verify', async () => {
    const c = await connect(t.url, token);
    c.send({ type: 'generate', id: 'v1', prompt: 'script to track expenses', language: 'bash', context: { includeTests: true }, verify: true });
    const { end, frames } = await c.result('v1', 60_000);
    expect(end.event, JSON.stringify(end.data)).toBe('complete');
    const events = frames.map((f) => f.event).filter((e) => e.startsWith('verify_') && e !== 'verify_output');
    expect(events).toEqual(['verify_started', 'verify_completed']);
    expect(end.data.verification).toMatchObject({ status: 'passed', attempts: 1 });
    c.ws.terminate();
  }, 60_000);

  it('a wrong answer fails with the failing test\'s output', async () => {
    fake.reset();
    fake.script({ reply: BROKEN });
    const res = await generate({ prompt: 'add two numbers', language: 'python', model: 'gpt-test', verify: true });
    expect(res.status).toBe(200);
    const v = res.body.verification;
    expect(v).toMatchObject({ status: 'failed', attempts: 1, tests: { passed: 0, failed: 2 } });
    const test = v.checks.find((c: { name: string }) => c.name === 'test');
    expect(test.exit_code).not.toBe(0);
    expect(test.output).toMatch(/assert -1 == 5|test_add/);
    expect(fake.requests).toHaveLength(1);
  });

  it('repair: 1 sends the failure back to the model; the fixed answer passes after 2 attempts, both calls counted', async () => {
    fake.reset();
    fake.script({ replies: [BROKEN, FIXED], reply: 'unused' });
    const res = await generate({ prompt: 'add two numbers', language: 'python', model: 'gpt-test', verify: { repair: 1 } });
    expect(res.status).toBe(200);
    const v = res.body.verification;
    expect(v.status, JSON.stringify(v).slice(0, 2000)).toBe('passed');
    expect(v.attempts).toBe(2);
    expect(v.history.map((h: { status: string }) => h.status)).toEqual(['failed', 'passed']);
    expect(v.tests).toEqual({ passed: 2, failed: 0 });
    // The merged project: the fixed module and the untouched test.
    expect(res.body.files.map((f: { path: string }) => f.path).sort()).toEqual(['calc.py', 'tests/test_calc.py']);
    expect(res.body.files.find((f: { path: string }) => f.path === 'calc.py').content).toContain('a + b');
    // The second call saw the first answer and the failing output.
    expect(fake.requests).toHaveLength(2);
    const repairMessages = fake.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    expect(repairMessages.at(-2)).toMatchObject({ role: 'assistant', content: BROKEN });
    expect(repairMessages.at(-1)!.content).toMatch(/These checks failed[\s\S]*test_add/);
    // Both calls' tokens are in the result.
    const calls = fake.requests.length;
    expect(res.body.usage.completion_tokens).toBe((BROKEN.match(/\S+\s*|\s+/g) ?? []).length + (FIXED.match(/\S+\s*|\s+/g) ?? []).length);
    expect(calls).toBe(2);
  });

  it('repairs are charged like any call: one the budget cannot cover stops the repairs and the verdict stands', async () => {
    await awayFromWindowEnd(20); // the first call, its checks in the sandbox and the refused repair in one minute window
    fake.reset();
    // The first call reports 15,000 tokens: a free plan's 20,000 a minute cannot hold the next call's reservation.
    fake.script({ replies: [BROKEN, FIXED], reply: 'unused', usage: { promptTokens: 15_000, completionTokens: 10 } });
    const res = await generate({ prompt: 'add two numbers', language: 'python', model: 'gpt-test', verify: { repair: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.verification).toMatchObject({ status: 'failed', attempts: 1, reason: expect.stringMatching(/^repair stopped: Tokens-per-minute limit/) });
    expect(fake.requests).toHaveLength(1);
    expect(res.body.tokens_used).toBe(15_010);
  }, 90_000);

  it('code that reaches for the network or the server\'s files fails its checks; the server stays healthy and its files untouched', async () => {
    const port = new URL(t.url).port;
    const escape = [
      'import socket, os\n\n',
      `def test_network():\n    socket.create_connection(("127.0.0.1", ${port}), timeout=2)\n\n`,
      `def test_write_data_dir():\n    open(${JSON.stringify(join(dataDir, 'pwned.txt'))}, "w").write("x")\n\n`,
      `def test_read_server_file():\n    assert open(${JSON.stringify(join(dataDir, 'server-secret.txt'))}).read()\n`,
    ].join('');
    fake.reset();
    fake.script({ reply: `\`\`\`python test_escape.py\n${escape}\`\`\`\n` });
    const res = await generate({ prompt: 'escape', language: 'python', model: 'gpt-test', verify: true });
    expect(res.status).toBe(200);
    expect(res.body.verification).toMatchObject({ status: 'failed', tests: { passed: 0, failed: 3 } });
    expect(readdirSync(dataDir)).toEqual(['server-secret.txt']);
    expect((await request(`${t.url}/healthz`)).status).toBe(200);
  });

  it('a fork bomb, an endless loop, a memory hog and gigabytes of output are each stopped and reported as a failed check', async () => {
    const script = (path: string, body: string) => `\`\`\`bash ${path}\n#!/usr/bin/env bash\n${body}\n\`\`\`\n`;
    // A whole-sandbox limit (here the process limit) stops the whole sandbox: the tests after the bomb are skipped.
    fake.reset();
    fake.script({ reply: [script('app.sh', 'echo app'), script('tests/bomb_test.sh', 'f() { f | f & }; f; sleep 60'), script('tests/zz_after_test.sh', 'echo after')].join('\n') });
    const bombed = (await generate({ prompt: 'hostile', language: 'bash', model: 'gpt-test', verify: true })).body.verification;
    const bombReport = JSON.stringify(bombed.checks, null, 1).slice(0, 3000);
    expect(bombed.status, bombReport).toBe('failed');
    expect(bombed.checks.find((c: { name: string }) => c.name === 'test tests/bomb_test.sh').killed, bombReport).toMatch(/process limit/);
    expect(bombed.checks.find((c: { name: string }) => c.name === 'test tests/zz_after_test.sh').skipped, bombReport).toBe(true);
    fake.reset();
    fake.script({ reply: [
      script('app.sh', 'echo app'),
      script('tests/loop_test.sh', 'while :; do :; done'),
      script('tests/memory_test.sh', 'x=aaaaaaaa; while :; do x="$x$x"; done'),
      script('tests/flood_test.sh', 'yes 0123456789abcdef0123456789abcdef'),
    ].join('\n') });
    const res = await generate({ prompt: 'hostile', language: 'bash', model: 'gpt-test', verify: true });
    expect(res.status).toBe(200);
    const v = res.body.verification;
    const by = Object.fromEntries(v.checks.map((c: { name: string }) => [c.name, c]));
    const report = JSON.stringify(v.checks.map((c: any) => ({ ...c, output: c.output.slice(-300) })), null, 1);
    expect(v.status, report).toBe('failed');
    expect(v.tests, report).toEqual({ passed: 0, failed: 3 });
    expect(by['test tests/loop_test.sh'].killed, report).toMatch(/CPU|SIGXCPU|SIGKILL/);
    expect(by['test tests/memory_test.sh'].exit_code, report).not.toBe(0);
    expect(by['test tests/flood_test.sh'].killed, report).toMatch(/output limit/);
    expect(by['test tests/flood_test.sh'].output.length).toBeLessThanOrEqual(8192 + 100);
    expect((await request(`${t.url}/healthz`)).status).toBe(200);
  }, 90_000);

  it('cancelling on the channel while the checks run kills the sandbox and ends with `cancelled`', async () => {
    fake.reset();
    fake.script({ reply: '```python tests/test_slow.py\nimport time\n\n\ndef test_slow():\n    time.sleep(300)\n```\n' });
    const c = await connect(t.url, token);
    c.send({ type: 'generate', id: 'slow', prompt: 'slow', language: 'python', model: 'gpt-test', verify: true });
    await c.waitFor((f) => f.id === 'slow' && f.event === 'verify_started', 0, 30_000);
    c.send({ type: 'cancel', id: 'slow' });
    const { end } = await c.result('slow', 30_000);
    expect(end).toMatchObject({ event: 'error', data: { code: 'cancelled' } });
    c.ws.terminate();
  }, 60_000);

  it('GET /verification says the sandbox works, which languages it checks here and under which limits', async () => {
    const res = await request(`${t.url}/api/v1/verification`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ available: true, install: false, limits: { timeout_s: 120, cpu_seconds: 10, memory_mb: 512 } });
    // How this host enforces the whole-sandbox limits (docs/verification.md), and the seccomp filter where it is known.
    expect(['cgroup v1', 'cgroup v2', 'watchdog']).toContain(res.body.isolation.limits);
    expect(res.body.isolation.seccomp).toBe(process.arch === 'x64' || process.arch === 'arm64');
    const langs = Object.fromEntries(res.body.languages.map((l: { id: string }) => [l.id, l]));
    expect(langs.python).toEqual({ id: 'python', supported: true });
    expect(langs.ruby).toMatchObject({ supported: false, reason: 'no checks are defined for ruby' });
    expect((await request(`${t.url}/api/v1/verification`)).status).toBe(401);
  });

  it('refuses a repair count above 3 with a 400 problem document', async () => {
    const res = await generate({ prompt: 'x', verify: { repair: 4 } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});
