/**
 * The channel's per-account connection slots (CODELOOM_WS_MAX_CONNECTIONS_PER_ACCOUNT, close
 * code 4429; docs/streaming.md "Limits and failures") are claimed only by a socket that is
 * still open once its credential has been checked, and every claimed slot is given back when
 * the socket closes. Sockets dropped while their credential is being checked (an `auth` frame
 * then a cut, or a cut right after an upgrade that carried the credential) used to claim a
 * slot after their close and keep it until a restart: enough of them and the account got
 * 4429 on every new connection; a connection cut while a fresh `auth` frame was checked left
 * its credential watched. Run with the in-memory stores, and with Redis when TEST_REDIS_URL is
 * set. With Redis a credential check waits on the network, so real cuts land inside it; with
 * the in-memory stores it ends before the server reads the cut, so there the slow-credential
 * tests (the server's resolver made slower) are the ones that reach the race, deterministically.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialResolver } from '../src/identity/credentials.js';
import { startTestServer, nextIp, TEST_REDIS_URL, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { openWs, type WsClient } from './helpers/ws-client.js';

const MAX = 3;
const DROPS = 50;
/** Drops run this many at once: a busy server checks credentials more slowly than it sees sockets go. */
const BATCH = 25;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const stores = [
  { name: 'in-memory stores', redis: false, enabled: true },
  { name: 'Redis', redis: true, enabled: Boolean(TEST_REDIS_URL) },
] as const;
if (!TEST_REDIS_URL) console.log('skipping the streaming slot tests on Redis: they need TEST_REDIS_URL');

for (const store of stores) {
  describe.skipIf(!store.enabled)(`WebSocket /api/v1/stream: connection slots are never leaked (${store.name})`, () => {
    let t: TestServer;

    beforeAll(async () => {
      t = await startTestServer({ redis: store.redis, env: { CODELOOM_WS_MAX_CONNECTIONS_PER_ACCOUNT: String(MAX), CODELOOM_WS_AUTH_TIMEOUT: '5' } });
    });
    afterAll(async () => { await t?.close(); });

    /** A fresh account and one of its API keys (a credential that never expires, so nothing but a close can give a slot back). */
    async function account() {
      const u = await registerUser(t.url, { ip: nextIp() });
      const key = await request(`${t.url}/api/v1/api-keys`, { token: u.token, body: { name: 'slots' } });
      expect(key.status).toBe(201);
      return { ...u, apiKey: key.body.key as string };
    }

    /** Opens a socket that authenticates with an `auth` frame; its first frame (`connected`, or the 429 error of a refusal). */
    async function authenticateByFrame(token: string) {
      const c = await openWs(t.url, { timeoutMs: 5_000 });
      c.send({ type: 'auth', token });
      return { c, first: await c.waitFor(() => true) };
    }

    /** `authenticateByFrame`, trying again for a while when refused with 4429 (a slot of a socket just cut is given back once the server has seen its close). */
    async function connectedByFrame(token: string) {
      for (const deadline = Date.now() + 2_000; ; await sleep(20)) {
        const o = await authenticateByFrame(token);
        if (o.first.event === 'connected' || Date.now() > deadline) return o;
        await o.c.closed;
      }
    }

    /** How many open connections of this instance watch the user's credentials (CredentialWatch's own bookkeeping). */
    const watched = (userId: string) => (t.server.ctx.credentialWatch as unknown as { byUser: Map<string, Set<unknown>> }).byUser.get(userId)?.size ?? 0;

    /** Once every connection of the user is closed, none of them still watches its credential. */
    async function expectNoWatch(userId: string) {
      for (let i = 0; i < 50 && watched(userId); i++) await sleep(20);
      expect(watched(userId), 'credential watches left behind by closed connections').toBe(0);
    }

    const closeAll = async (cs: WsClient[]) => { for (const c of cs) c.ws.close(); await Promise.all(cs.map((c) => c.closed)); };

    /**
     * The account can open all MAX of its connections, and the next one is refused with 4429.
     * Sockets just dropped may still hold a slot until the server has seen their close (a few
     * ms), so this tries for a while; a leaked slot never comes back and fails it.
     */
    async function expectFullAllowance(token: string) {
      let last = '';
      for (const deadline = Date.now() + 4_000; Date.now() < deadline; await sleep(100)) {
        const opened = await Promise.all(Array.from({ length: MAX }, () => authenticateByFrame(token)));
        const refused = opened.filter((o) => o.first.event !== 'connected');
        if (refused.length) {
          last = `${refused.length} of ${MAX} refused: ${JSON.stringify(refused[0]!.first)}`;
          await closeAll(opened.map((o) => o.c));
          continue;
        }
        // The limit itself still holds: one more is refused.
        const over = await authenticateByFrame(token);
        expect(over.first).toMatchObject({ event: 'error', data: { status: 429, code: 'rate_limited' } });
        expect((await over.c.closed).code).toBe(4429);
        await closeAll(opened.map((o) => o.c));
        return;
      }
      expect.fail(`the account could not open its ${MAX} connections (leaked slots): ${last}`);
    }

    /** Runs `drop` DROPS times, BATCH at a time, then waits until every socket is closed. */
    async function dropMany(drop: () => Promise<WsClient>) {
      const dropped: WsClient[] = [];
      for (let i = 0; i < DROPS; i += BATCH) dropped.push(...await Promise.all(Array.from({ length: Math.min(BATCH, DROPS - i) }, drop)));
      await Promise.all(dropped.map((c) => c.closed));
    }

    it(`${DROPS} sockets cut right after sending their auth frame leave no slot behind`, async () => {
      const u = await account();
      await dropMany(async () => {
        const c = await openWs(t.url);
        c.send({ type: 'auth', token: u.apiKey });
        c.ws.terminate();
        return c;
      });
      await expectFullAllowance(u.apiKey);
      // Closed normally, every slot comes back again.
      await expectFullAllowance(u.apiKey);
      await expectNoWatch(u.user.id);
    });

    it(`${DROPS} sockets cut right after an upgrade that carried the credential leave no slot behind`, async () => {
      const u = await account();
      await dropMany(async () => {
        const c = await openWs(t.url, { token: u.apiKey });
        c.ws.terminate();
        return c;
      });
      await expectFullAllowance(u.apiKey);
      await expectNoWatch(u.user.id);
    });

    /**
     * Makes the server's own credential resolver take `ms` longer (for HTTP too) while `body` runs, then waits
     * for the checks still running to end: every socket cut meanwhile is gone before its credential is known.
     */
    async function withSlowCredentials(ms: number, body: () => Promise<void>) {
      const credentials: CredentialResolver = t.server.ctx.credentials;
      const resolve = credentials.resolve;
      let inFlight = 0;
      credentials.resolve = async (...args) => {
        inFlight++;
        try {
          await sleep(ms);
          return await resolve.apply(credentials, args);
        } finally { inFlight--; }
      };
      try {
        await body();
        for (let i = 0; i < 100 && inFlight; i++) await sleep(20);
        expect(inFlight).toBe(0);
      } finally {
        credentials.resolve = resolve;
      }
    }

    it('a credential check that outlasts its socket claims no slot (slow credential store, both ways to authenticate)', async () => {
      const u = await account();
      await withSlowCredentials(150, async () => {
        const cuts: WsClient[] = [];
        for (let i = 0; i < 2 * MAX; i++) {
          const byFrame = await openWs(t.url);
          byFrame.send({ type: 'auth', token: u.apiKey });
          await sleep(20); // the server has the frame and is checking it
          byFrame.ws.terminate();
          const byHeader = await openWs(t.url, { token: u.apiKey });
          byHeader.ws.terminate();
          cuts.push(byFrame, byHeader);
        }
        await Promise.all(cuts.map((c) => c.closed));
      });
      await expectFullAllowance(u.apiKey);
      await expectNoWatch(u.user.id);
    });

    it('a fresh auth frame whose check outlasts its socket leaves no credential watch behind (slow credential store)', async () => {
      const u = await account();
      const open = await Promise.all(Array.from({ length: MAX }, () => connectedByFrame(u.apiKey)));
      expect(open.map((o) => o.first.event)).toEqual(Array(MAX).fill('connected'));
      await withSlowCredentials(150, async () => {
        for (const { c } of open) c.send({ type: 'auth', token: u.token });
        await sleep(20);
        for (const { c } of open) c.ws.terminate();
        await Promise.all(open.map(({ c }) => c.closed));
      });
      await expectFullAllowance(u.apiKey);
      await expectNoWatch(u.user.id);
    });

    it('sockets that re-authenticate and are cut, or are refused with 4429 while another auth is checked, give back what they hold', async () => {
      const u = await account();
      // Re-auth then a cut, again and again: each connection's slot comes back, and nothing keeps watching its credential.
      for (let i = 0; i < 20; i++) {
        const { c, first } = await connectedByFrame(u.apiKey);
        expect(first.event).toBe('connected');
        c.send({ type: 'auth', token: u.token });
        c.ws.terminate();
        await c.closed;
      }
      await expectFullAllowance(u.apiKey);
      await expectNoWatch(u.user.id);
      // Full account: sockets sending two auth frames back to back are refused (4429), and the second frame claims nothing.
      const held = await Promise.all(Array.from({ length: MAX }, () => connectedByFrame(u.apiKey)));
      expect(held.map((h) => h.first.event)).toEqual(Array(MAX).fill('connected'));
      const refused = await Promise.all(Array.from({ length: 10 }, async () => {
        const c = await openWs(t.url);
        c.send({ type: 'auth', token: u.apiKey });
        c.send({ type: 'auth', token: u.token });
        return c;
      }));
      for (const c of refused) expect((await c.closed).code).toBe(4429);
      await closeAll(held.map((h) => h.c));
      await expectFullAllowance(u.apiKey);
      await expectNoWatch(u.user.id);
    });
  });
}
