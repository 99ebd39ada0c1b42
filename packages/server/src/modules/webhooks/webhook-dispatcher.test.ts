import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../storage/open-database.js';
import { createStore, type Store } from '../../storage/store.js';
import { dropPgSchema } from '../../../test/helpers/pg-schema.js';
import { TEST_DATABASE_URL, uniqueName } from '../../../test/helpers/test-server.js';
import type { DeliveryHandler, DeliveryQueue } from './delivery-queue.js';
import { retrySchedule } from './webhook-backoff.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';

/** A queue that only records what is scheduled: the test makes the attempts itself. */
class RecordingQueue implements DeliveryQueue {
  readonly name = 'in-process' as const;
  readonly scheduled: Array<[string, number, number]> = [];
  async start(_handler: DeliveryHandler) {}
  async schedule(id: string, attempt: number, at: number) { this.scheduled.push([id, attempt, at]); }
  async close() {}
}

function dispatcherSuite(name: string, open: () => Promise<{ handle: DatabaseHandle; drop?: () => Promise<void> }>) {
describe(`webhook dispatcher: one send per attempt, whatever runs it (${name})`, () => {
  let server: Server;
  let url: string;
  let hits = 0;
  let status = 200;
  let handle: DatabaseHandle;
  let drop: (() => Promise<void>) | undefined;
  let store: Store;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => { hits++; setTimeout(() => res.writeHead(status).end(), 50); });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => { server.closeAllConnections(); server.close(); });

  beforeEach(async () => {
    hits = 0;
    status = 200;
    ({ handle, drop } = await open());
    await migrateToLatest(handle);
    store = createStore(handle);
  });
  afterEach(async () => {
    await store.handle.close();
    await drop?.();
  });

  async function delivery(nextAttemptAt = new Date().toISOString()) {
    const account = await store.accounts.create({ email: 'w@example.com', emailNormalized: 'w@example.com', name: 'W', passwordHash: 'x', plan: 'free' });
    const now = new Date().toISOString();
    await store.webhooks.create({ id: 'whk_1', user_id: account.user.id, url, events: '["run.succeeded"]', description: '', secret: 'whsec_x', created_at: now });
    await store.webhooks.insertDeliveries([{
      id: 'whd_1', webhook_id: 'whk_1', event_id: 'evt_1', event_type: 'run.succeeded', body: '{"id":"evt_1"}', status: 'pending', attempts: 0,
      response_status: null, last_error: null, next_attempt_at: nextAttemptAt, created_at: now, delivered_at: null,
    }]);
  }
  const dispatcher = (queue = new RecordingQueue()) => new WebhookDispatcher(store.webhooks, queue, {
    allowPrivate: true, timeoutMs: 2_000, userAgent: 'test', schedule: retrySchedule(1_000), sweepMs: 60_000, onError: (e) => { throw e; },
  });

  it('the same attempt run by two dispatchers at once (two instances, a job run twice) is sent once', async () => {
    await delivery();
    const [a, b] = [dispatcher(), dispatcher()];
    await Promise.all([a.attempt('whd_1', 1), b.attempt('whd_1', 1), a.attempt('whd_1', 1)]);
    expect(hits).toBe(1);
    expect(await store.webhooks.delivery('whd_1')).toMatchObject({ status: 'succeeded', attempts: 1, response_status: 200 });
  });

  it('a failed attempt schedules the next with backoff; a stale job of an earlier attempt sends nothing', async () => {
    await delivery();
    status = 500;
    const queue = new RecordingQueue();
    const d = dispatcher(queue);
    const before = Date.now();
    await d.attempt('whd_1', 1);
    const row = await store.webhooks.delivery('whd_1');
    expect(row).toMatchObject({ status: 'pending', attempts: 1, response_status: 500, last_error: 'HTTP 500' });
    expect(queue.scheduled).toHaveLength(1);
    const [id, attempt, at] = queue.scheduled[0]!;
    expect([id, attempt]).toEqual(['whd_1', 2]);
    expect(at).toBeGreaterThanOrEqual(before + 1_000);
    expect(Date.parse(row!.next_attempt_at!)).toBe(at);
    // Attempt 1's job again: nothing sent, attempt 2 (already scheduled) named again.
    await d.attempt('whd_1', 1);
    expect(hits).toBe(1);
    // Attempt 2's job before its time: it comes back at the row's time, nothing sent.
    expect(await d.attempt('whd_1', 2)).toBe(at);
    expect(hits).toBe(1);
  });

  it('an attempt claimed by an instance that died is taken up as the next attempt once its lease ends', async () => {
    await delivery();
    // Another instance claimed attempt 1 and died before recording anything: its lease ended a moment ago.
    const past = new Date(Date.now() - 1_000).toISOString();
    expect(await store.webhooks.claim('whd_1', 1, new Date().toISOString(), past)).toBe(true);
    const queue = new RecordingQueue();
    const d = dispatcher(queue);
    // Its job comes round again (a stalled job): the row says attempt 2 is due.
    await d.attempt('whd_1', 1);
    expect(queue.scheduled).toEqual([['whd_1', 2, Date.parse(past)]]);
    await d.attempt('whd_1', 2);
    expect(hits).toBe(1);
    expect(await store.webhooks.delivery('whd_1')).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('at start every pending delivery is scheduled from its row', async () => {
    const later = new Date(Date.now() + 60_000).toISOString();
    await delivery(later);
    const queue = new RecordingQueue();
    const d = dispatcher(queue);
    await d.start();
    await d.close();
    expect(queue.scheduled).toEqual([['whd_1', 1, Date.parse(later)]]);
  });
});
}

dispatcherSuite('SQLite', async () => ({ handle: await openDatabase({ sqliteFile: ':memory:' }) }));

if (!TEST_DATABASE_URL) console.log('skipping the webhook dispatcher tests on PostgreSQL: TEST_DATABASE_URL is not set');
describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL', () => {
  dispatcherSuite('PostgreSQL', async () => {
    const pgSchema = uniqueName('whk_disp');
    return { handle: await openDatabase({ databaseUrl: TEST_DATABASE_URL, pgSchema }), drop: () => dropPgSchema(pgSchema) };
  });
});
