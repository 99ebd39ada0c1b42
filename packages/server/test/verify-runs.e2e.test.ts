/**
 * Workflows with `config.verify: true`: the tester step runs the checks on the files so far, the reviewer is
 * told the real results, a failing test turns its "approve" into changes_requested, and the run's
 * result.verification holds the last verdict. The OpenAI fake plays every agent in turn (broken code, tests,
 * an approving reviewer, the fix, an approving reviewer). Skipped, saying so, where bubblewrap cannot run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { registerUser, request } from './helpers/http.js';
import { nextIp, startTestServer, type TestServer } from './helpers/test-server.js';

const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping the workflow verification tests: ${probe.reason}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BROKEN = '```python calc.py\ndef add(a, b):\n    return a - b\n```\n';
const TESTS = '```python tests/test_calc.py\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n```\n';
const FIXED = '```python calc.py\ndef add(a, b):\n    return a + b\n```\n';

describe.skipIf(!probe.available)('a workflow with verify', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let token: string;

  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test' } });
    token = (await registerUser(t.url, { ip: nextIp() })).token;
  });
  afterAll(async () => { await t?.close(); await fake?.close(); });

  it('the tester runs the checks, a failing test forces changes_requested, and the fixed code is approved', async () => {
    fake.script({ replies: [BROKEN, TESTS, 'VERDICT: approve\n- looks fine', FIXED, 'VERDICT: approve'], reply: 'VERDICT: approve' });
    const wf = await request(`${t.url}/api/v1/agents/create`, { method: 'POST', token, body: { name: 'checked', agents: ['coder', 'tester', 'reviewer'].map((type) => ({ type, model: 'gpt-test' })), config: { verify: true, max_iterations: 1 } } });
    expect(wf.status).toBe(201);
    const exec = await request(`${t.url}/api/v1/workflows/${wf.body.id}/execute`, { method: 'POST', token, body: { task: 'add two numbers', language: 'python' } });
    expect(exec.status).toBe(202);
    let run: any;
    for (const deadline = Date.now() + 90_000; ;) {
      run = (await request(`${t.url}/api/v1/runs/${exec.body.id}`, { token })).body;
      if (['succeeded', 'failed', 'cancelled'].includes(run.status) || Date.now() > deadline) break;
      await sleep(300);
    }
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.steps.map((s: any) => [s.agent, s.iteration, s.verdict ?? null, s.verification?.status ?? null])).toEqual([
      ['coder', 0, null, null],
      ['tester', 0, null, 'failed'],
      ['reviewer', 0, 'changes_requested', 'failed'],
      ['coder', 1, null, null],
      ['reviewer', 1, 'approve', 'passed'],
    ]);
    expect(run.steps[1].verification.tests).toEqual({ passed: 0, failed: 1 });
    // The reviewer was told the real results, failing output included.
    const told = (fake.requests[2]!.body.messages as Array<{ content: string }>).at(-1)!.content;
    expect(told).toMatch(/FAILED[\s\S]*assert -1 == 5/);
    expect(run.result.verification).toMatchObject({ status: 'passed', tests: { passed: 1, failed: 0 } });
  }, 120_000);
});
