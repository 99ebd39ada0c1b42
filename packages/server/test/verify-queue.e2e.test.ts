/**
 * Verification admission over the real interface (CONTRACT §12.1), with CODELOOM_VERIFY_PER_ACCOUNT=1 and
 * CODELOOM_VERIFY_QUEUE=1: one organization's third verifying request is refused with 429 `rate_limited` and
 * Retry-After before its model is called (JSON, SSE and the WebSocket frame) while another organization's
 * verification starts at once; a client that leaves while its verification waits is never started and its
 * place frees; one that leaves while its checks run frees its slot at once. And the honest status of a
 * verification whose test command ran no test. The OpenAI fake answers with a test that sleeps for
 * minutes, so verifications overlap for as long as the test needs them to (each is ended by its client
 * leaving). Skipped, saying so, where bubblewrap cannot run.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { registerUser, request } from './helpers/http.js';
import { sseRequest, type Streamed } from './helpers/sse-request.js';
import { nextIp, startTestServer, type TestServer } from './helpers/test-server.js';
import { connect } from './helpers/ws-client.js';

const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping the verification queue tests: ${probe.reason}`);

const SLOW = '```python tests/test_slow.py\nimport time\n\n\ndef test_slow():\n    time.sleep(300)\n```\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A streamed generation (SSE) read as it arrives, which the test can leave (abort) at any point. */
describe.skipIf(!probe.available)('verification admission: per-organization slots and queue', () => {
  let fake: FakeVendor;
  let t: TestServer;
  const open: Streamed[] = [];

  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: {
      OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test',
      CODELOOM_VERIFY_CONCURRENCY: '2', CODELOOM_VERIFY_PER_ACCOUNT: '1', CODELOOM_VERIFY_QUEUE: '1', CODELOOM_VERIFY_TIMEOUT: '400',
    } });
  });
  // Every stream a test opened is left, so no sandbox outlives its test.
  afterEach(async () => {
    for (const s of open.splice(0)) s.leave();
    await until(() => scheduler().stats().running === 0 && scheduler().stats().admitted === 0, 'every verification ended');
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  const scheduler = () => t.server.ctx.generation.verification!.scheduler;
  const fresh = async () => (await registerUser(t.url, { ip: nextIp() })).token;
  const body = (extra: Record<string, unknown> = {}) => ({ prompt: 'slow', language: 'python', model: 'gpt-test', max_tokens: 200, verify: true, ...extra });

  async function until(ok: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    for (const deadline = Date.now() + timeoutMs; !ok();) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}: ${JSON.stringify(scheduler().stats())}`);
      await sleep(20);
    }
  }

  /** A streamed generation on its own connection, read as it arrives (kept, so afterEach can leave what is still open). */
  async function stream(token: string, extra: Record<string, unknown> = {}): Promise<Streamed> {
    const s = await sseRequest(`${t.url}/api/v1/generate`, { token, body: body({ stream: true, ...extra }), describe: () => `scheduler ${JSON.stringify(scheduler().stats())}` });
    open.push(s);
    return s;
  }

  it('a third request of one organization is refused with 429 and Retry-After before its model is called, on every route; another organization\'s starts at once; a client leaving its running verification frees the slot', async () => {
    fake.reset();
    fake.script({ reply: SLOW });
    const [a, b] = [await fresh(), await fresh()];
    const a1 = await stream(a);
    await a1.waitFor('verify_started');
    const a2 = await stream(a);
    expect(a2.status).toBe(200);
    // a2's model answered; its verification waits for the organization's one slot.
    await until(() => scheduler().stats().waiting === 1, 'the second request waits');
    expect(a2.has('verify_started')).toBe(false);
    const calls = fake.requests.length;

    const json = await request(`${t.url}/api/v1/generate`, { method: 'POST', token: a, body: body() });
    expect(json.status, json.text).toBe(429);
    expect(json.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(json.body).toMatchObject({ status: 429, code: 'rate_limited', detail: expect.stringMatching(/At most 1 verification of an organization run at once and 1 more wait/) });
    expect(Number(json.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(json.headers.get('retry-after'))).toBeLessThanOrEqual(400);

    const sse = await stream(a);
    await sse.ended;
    expect(sse.status).toBe(429);
    expect(sse.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(sse.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(sse.problem.code).toBe('rate_limited');

    const ws = await connect(t.url, a);
    try {
      ws.send({ type: 'generate', id: 'w3', ...body() });
      const { end } = await ws.result('w3', 30_000);
      expect(end).toMatchObject({ event: 'error', data: { status: 429, code: 'rate_limited' } });
      expect(end.data.retry_after).toBeGreaterThanOrEqual(1);
    } finally {
      ws.ws.terminate();
    }
    // None of the refused requests reached the model.
    expect(fake.requests.length).toBe(calls);

    // Another organization's verification takes the instance's second slot at once.
    const b1 = await stream(b);
    await b1.waitFor('verify_started');
    expect(scheduler().stats()).toMatchObject({ running: 2, waiting: 1 });

    // a1's client leaves while its test sleeps: the sandbox is killed and the slot goes to a2 (a1's test would hold it for 300 s).
    a1.leave();
    await a2.waitFor('verify_started', 60_000);
    expect(scheduler().stats()).toMatchObject({ running: 2, waiting: 0, admitted: 2 });
  }, 180_000);

  it('a client that leaves while its verification waits is never started, and its place frees at once', async () => {
    fake.reset();
    fake.script({ reply: SLOW });
    const a = await fresh();
    const a1 = await stream(a);
    await a1.waitFor('verify_started');
    const a2 = await stream(a);
    await until(() => scheduler().stats().waiting === 1, 'the second request waits');
    a2.leave();
    await until(() => scheduler().stats().waiting === 0 && scheduler().stats().admitted === 1, 'the waiter is gone');
    // Its place is free: the organization's next request is admitted, and waits.
    const a3 = await stream(a);
    expect(a3.status).toBe(200);
    await until(() => scheduler().stats().waiting === 1, 'the third request waits');
    // a1 leaves: the slot goes to a3. Had a2 started, its 300-second test would hold the organization's only slot.
    a1.leave();
    await a3.waitFor('verify_started', 60_000);
    await a2.ended;
    expect(a2.has('verify_started')).toBe(false);
    expect(scheduler().stats()).toMatchObject({ running: 1, waiting: 0, admitted: 1 });
  }, 180_000);

  it('GET /verification names the per-organization limits', async () => {
    const res = await request(`${t.url}/api/v1/verification`, { token: await fresh() });
    expect(res.status).toBe(200);
    expect(res.body.limits).toMatchObject({ concurrency: 2, per_account: 1, queue: 1 });
  });

  describe('a test command that ran no test', () => {
    const JS_NO_TESTS = [
      '```json package.json\n{"name": "adder", "type": "module", "scripts": {"test": "node --test"}}\n```\n',
      '```javascript src/add.js\nexport const add = (a, b) => a + b;\n```\n',
    ].join('\n');
    const JS_TEST = '```javascript test/add.test.js\nimport { test } from \'node:test\';\nimport assert from \'node:assert/strict\';\nimport { add } from \'../src/add.js\';\ntest(\'adds\', () => { assert.equal(add(2, 3), 5); });\n```\n';
    const PY_NO_TESTS = '```python calc.py\ndef add(a, b):\n    return a + b\n```\n\n```python test_calc.py\nimport unittest\n\n\nclass TestCalc(unittest.TestCase):\n    pass\n```\n';

    it('is `failed` with a reason saying no test ran, though every check exited 0 (node --test, unittest)', async () => {
      const token = await fresh();
      for (const [language, reply] of [['javascript', JS_NO_TESTS], ['python', PY_NO_TESTS]] as const) {
        fake.reset();
        fake.script({ reply });
        const res = await request(`${t.url}/api/v1/generate`, { method: 'POST', token, body: { prompt: 'add two numbers', language, model: 'gpt-test', max_tokens: 400, verify: true } });
        expect(res.status, res.text).toBe(200);
        const v = res.body.verification;
        const report = `${language}: ${JSON.stringify(v).slice(0, 2000)}`;
        expect(v, report).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^no test ran/), tests: { passed: 0, failed: 0 }, attempts: 1 });
        expect(v.checks.map((c: { name: string }) => c.name), report).toContain('test');
        expect(v.checks.every((c: { exit_code: number }) => c.exit_code === 0), report).toBe(true);
      }
    }, 120_000);

    it('a repair asks the model for tests, and an answer whose tests run passes', async () => {
      fake.reset();
      fake.script({ replies: [JS_NO_TESTS, JS_TEST], reply: 'unused' });
      const res = await request(`${t.url}/api/v1/generate`, { method: 'POST', token: await fresh(), body: { prompt: 'add two numbers', language: 'javascript', model: 'gpt-test', max_tokens: 400, verify: { repair: 1 } } });
      expect(res.status, res.text).toBe(200);
      const v = res.body.verification;
      expect(v.history.map((h: { status: string }) => h.status), JSON.stringify(v).slice(0, 2000)).toEqual(['failed', 'passed']);
      expect(v.tests).toEqual({ passed: 1, failed: 0 });
      expect(fake.requests).toHaveLength(2);
      const asked = (fake.requests[1]!.body.messages as Array<{ content: string }>).at(-1)!.content;
      expect(asked).toMatch(/no test ran/);
      expect(asked).toMatch(/Write tests/);
    }, 120_000);
  });
});
