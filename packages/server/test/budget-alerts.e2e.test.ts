/**
 * Budget alerts (CONTRACT §12.2, docs/api.md "Budgets" and "Webhooks"): a budget's `budget.threshold` event
 * goes out once per threshold per period, and `budget.exceeded` once per period at the first refusal, however
 * many calls cross them together, on one instance and on two server processes sharing PostgreSQL + Redis. A
 * real loopback receiver checks the signature of every delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { startTestServer, nextIp } from './helpers/test-server.js';
import { clusterEnabled, startCluster } from './helpers/cluster.js';
import { registerUser, request } from './helpers/http.js';
import { eventually, signatureValid, sleep, startWebhookReceiver } from './helpers/webhook-receiver.js';

// 20 prompt + 10 completion tokens at 100 and 1,000 USD per million: 12,000 micro-dollars a call.
const PRICES = { 'gpt-test': { input: 100, output: 1_000 } };
const USAGE = { promptTokens: 20, completionTokens: 10 };
const CALL_MICROS = 12_000;
const AMOUNT_MICROS = 10 * CALL_MICROS;
const env = (fake: FakeVendor) => ({
  OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-up', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox',
  CODELOOM_UPSTREAM_RETRIES: '0', CODELOOM_MODEL_PRICES: JSON.stringify(PRICES), CODELOOM_WEBHOOK_ALLOW_PRIVATE: 'true',
});

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

/**
 * Waves of concurrent calls spread over `bases` until a whole wave is refused: each wave's settles race across
 * the thresholds, the refusals race to be the period's first. Returns how many calls were admitted.
 */
async function spendUntilRefused(bases: string[], token: string): Promise<number> {
  let admitted = 0;
  for (let wave = 0; wave < 40; wave++) {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => request(`${bases[i % bases.length]}/api/v1/generate`, {
      token, body: { prompt: 'a todo API', model: 'gpt-test', max_tokens: 10 },
    })));
    for (const a of answers) {
      if (a.status === 200) admitted++;
      else expect(a.body.code, a.text).toBe('budget_exceeded');
    }
    if (answers.every((a) => a.status !== 200)) return admitted;
  }
  throw new Error('the budget never refused a whole wave');
}

async function expectAlertsOnce(receiver: Receiver, secret: string, budgetId: string, admitted: number) {
  // Spent: admitted × 12,000 of 120,000, so the 0.25 (30,000) and 0.5 (60,000) thresholds were crossed; then the refusals.
  expect(admitted * CALL_MICROS).toBeGreaterThanOrEqual(AMOUNT_MICROS / 2);
  await eventually(() => receiver.received.some((h) => h.json?.type === 'budget.exceeded') && receiver.received.filter((h) => h.json?.type === 'budget.threshold').length >= 2, 'the alerts');
  await sleep(1_500); // any duplicate would have arrived by now
  for (const hook of receiver.received) expect(signatureValid(secret, hook.headers['codeloom-signature'] as string, hook.body)).toBe(true);
  const thresholds = receiver.received.filter((h) => h.json.type === 'budget.threshold');
  expect(thresholds.map((h) => h.json.data.threshold).sort()).toEqual([0.25, 0.5]);
  for (const h of thresholds) {
    expect(h.json.data.budget.id).toBe(budgetId);
    expect(h.json.data.budget.spent_usd * 1e6).toBeGreaterThanOrEqual(h.json.data.threshold * AMOUNT_MICROS);
    expect(h.json.id).toMatch(/^evt_/);
  }
  const exceeded = receiver.received.filter((h) => h.json.type === 'budget.exceeded');
  expect(exceeded).toHaveLength(1);
  expect(exceeded[0]!.json.data.budget).toMatchObject({ id: budgetId, amount_usd: AMOUNT_MICROS / 1e6, period: 'day' });
  expect(receiver.received).toHaveLength(3);
}

async function setUp(base: string, receiver: Receiver) {
  const user = await registerUser(base, { ip: nextIp() });
  const org = (await request(`${base}/api/v1/user/profile`, { token: user.token })).body.organization.id as string;
  const hook = await request(`${base}/api/v1/webhooks`, { token: user.token, body: { url: receiver.url, events: ['budget.threshold', 'budget.exceeded'] } });
  expect(hook.status, hook.text).toBe(201);
  const budget = await request(`${base}/api/v1/budgets`, { token: user.token, body: { scope: { type: 'organization', id: org }, amount_usd: AMOUNT_MICROS / 1e6, period: 'day', alert_thresholds: [0.25, 0.5] } });
  expect(budget.status, budget.text).toBe(201);
  return { token: user.token, secret: hook.body.secret as string, budgetId: budget.body.id as string };
}

describe('budget alerts on one instance', () => {
  let fake: FakeVendor;
  let receiver: Receiver;
  let t: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: 'Short answer.', usage: USAGE } });
    receiver = await startWebhookReceiver();
    t = await startTestServer({ env: env(fake) });
  });
  afterAll(async () => { await t?.close(); await receiver?.close(); await fake?.close(); });

  it('each threshold once, the first refusal once, signed', async () => {
    const { token, secret, budgetId } = await setUp(t.url, receiver);
    const admitted = await spendUntilRefused([t.url], token);
    await expectAlertsOnce(receiver, secret, budgetId, admitted);
    // More refusals in the same period send nothing more.
    expect((await request(`${t.url}/api/v1/generate`, { token, body: { prompt: 'again', model: 'gpt-test', max_tokens: 10 } })).body.code).toBe('budget_exceeded');
    await sleep(500);
    expect(receiver.received).toHaveLength(3);
  }, 60_000);
});

if (!clusterEnabled) console.log('skipping the two-instance budget alert test: it needs TEST_DATABASE_URL and TEST_REDIS_URL');

describe.skipIf(!clusterEnabled)('budget alerts across two server processes on PostgreSQL + Redis', () => {
  let fake: FakeVendor;
  let receiver: Receiver;
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  beforeAll(async () => {
    fake = await startOpenAIFake({ script: { reply: 'Short answer.', usage: USAGE, chunkDelayMs: 5 } });
    receiver = await startWebhookReceiver();
    cluster = await startCluster('budalert', { env: env(fake) });
  }, 60_000);
  afterAll(async () => { await cluster?.stop(); await receiver?.close(); await fake?.close(); });

  it('racing calls on both instances: each threshold once, the first refusal once', async () => {
    const bases = cluster.servers.map((s) => s.url);
    const { token, secret, budgetId } = await setUp(bases[0]!, receiver);
    const admitted = await spendUntilRefused(bases, token);
    await expectAlertsOnce(receiver, secret, budgetId, admitted);
  }, 60_000);
});
