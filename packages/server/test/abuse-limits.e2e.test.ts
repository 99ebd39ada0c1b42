import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextIp, startTestServer, type TestServer } from './helpers/test-server.js';
import { registerUser, request } from './helpers/http.js';
import { bye, connect, openWs } from './helpers/ws-client.js';

describe('anonymous budgets are per address, whatever the headers', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  it('X-Environment: sandbox does not buy an anonymous caller a second budget', async () => {
    // Windows are aligned to the clock minute: a run that straddles a minute boundary is tried again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const ip = nextIp();
      const remaining: number[] = [];
      let last = 0;
      for (let i = 0; i < 101; i++) {
        const res = await request(`${t.url}/api/v1/models`, { headers: { 'x-forwarded-for': ip, 'x-environment': i % 2 ? 'sandbox' : 'production' } });
        remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
        last = res.status;
      }
      if (remaining.some((r, i) => i > 0 && r > remaining[i - 1]!)) continue; // the window reset under us
      expect(remaining.slice(0, 100)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
      expect(last).toBe(429);
      const sandbox = await request(`${t.url}/api/v1/models`, { headers: { 'x-forwarded-for': ip, 'x-environment': 'sandbox' } });
      if (Number(sandbox.headers.get('x-ratelimit-remaining')) > 0) continue;
      expect(sandbox.status).toBe(429);
      expect(sandbox.body.code).toBe('rate_limited');
      return;
    }
    throw new Error('three runs straddled a minute boundary');
  });
});

describe('streaming frame rate limits', () => {
  let t: TestServer;
  let token: string;
  beforeAll(async () => {
    t = await startTestServer({ env: { CODELOOM_WS_FRAMES_PER_SECOND: '5', CODELOOM_WS_FRAME_BURST: '10', CODELOOM_WS_FRAME_REFUSALS_BEFORE_CLOSE: '30' } });
    token = (await registerUser(t.url, { ip: nextIp() })).token;
  });
  afterAll(async () => { await t.close(); });

  it('a client within the limit is answered every frame', async () => {
    const c = await connect(t.url, token);
    for (let i = 0; i < 5; i++) await c.ping();
    expect(c.frames.filter((f) => f.event === 'error')).toEqual([]);
    await bye(c);
  });

  it('pings past the burst are dropped with one rate_limited error frame; the connection stays open', async () => {
    const c = await connect(t.url, token);
    for (let i = 0; i < 25; i++) c.send({ type: 'ping' });
    const refused = await c.waitFor((f) => f.event === 'error' && f.data?.code === 'rate_limited');
    expect(refused.data).toMatchObject({ status: 429, code: 'rate_limited', retry_after: expect.any(Number) });
    await new Promise((r) => setTimeout(r, 300));
    const pongs = c.frames.filter((f) => f.event === 'pong').length;
    expect(pongs).toBeGreaterThanOrEqual(10);
    expect(pongs).toBeLessThan(25);
    expect(c.frames.filter((f) => f.event === 'error')).toHaveLength(1); // one notice, not one per dropped frame
    // After a pause the bucket refills and frames are answered again.
    await new Promise((r) => setTimeout(r, 1_200));
    await c.ping();
    await bye(c);
  });

  it('bad frames count too: invalid JSON, binary and oversized frames', async () => {
    const c = await openWs(t.url); // not even authenticated
    for (let i = 0; i < 4; i++) c.send('{not json');
    for (let i = 0; i < 3; i++) c.ws.send(Buffer.from([1, 2, 3]));
    c.send('x'.repeat(300 * 1024)); // over the frame size: costs more than one frame
    const refused = await c.waitFor((f) => f.data?.code === 'rate_limited');
    expect(refused.event).toBe('error');
    expect(c.frames.filter((f) => f.data?.code === 'malformed_json')).toHaveLength(4);
    c.ws.close();
    await c.closed;
  });

  it('a client that keeps sending past the limit is closed with 1008', async () => {
    const c = await connect(t.url, token);
    for (let i = 0; i < 200 && c.ws.readyState === c.ws.OPEN; i++) c.send({ type: 'ping' });
    const closed = await c.closed;
    expect(closed.code).toBe(1008);
    expect(c.frames.filter((f) => f.data?.code === 'rate_limited').length).toBeGreaterThanOrEqual(1);
    // Other connections of the same account are unaffected.
    const other = await connect(t.url, token);
    await other.ping();
    await bye(other);
  });
});
