import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIFake } from '../../server/test/fakes/openai-fake.js';
import type { FakeVendor } from '../../server/test/fakes/fake-vendor.js';
import type { CodeloomError, RunEvent, TokenPair } from '../src/index.js';
import { WebSocket, clientFor, newUser, recordingFetch, startTestServer, type TestServer } from './helpers.js';

const fail = (e: unknown) => e as CodeloomError;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i} `);

/** The `ws` client, keeping every socket the SDK opens and the frames it sends. */
const sockets: TrackedWebSocket[] = [];
class TrackedWebSocket extends WebSocket {
  readonly sent: Array<Record<string, unknown>> = [];
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    sockets.push(this);
  }
  override send(data: unknown, ...rest: unknown[]): void {
    this.sent.push(JSON.parse(String(data)) as Record<string, unknown>);
    (super.send as (...a: unknown[]) => void)(data, ...rest);
  }
  get authTokens(): string[] {
    return this.sent.filter((f) => f.type === 'auth').map((f) => f.token as string);
  }
}

/**
 * Access tokens live 1–2 s here (TTL 2 s, `exp` in whole seconds) and the
 * server closes a connection whose token expires, so a generation or a run
 * watch that streams for ~5 s survives only if the SDK renews the
 * credential on the open connection.
 */
describe('open streaming connections renew their access token (access TTL 2 s)', () => {
  let t: TestServer;
  let fake: FakeVendor;
  beforeAll(async () => {
    fake = await startOpenAIFake();
    t = await startTestServer({ env: { CODELOOM_ACCESS_TOKEN_TTL: '2', OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox' } });
  });
  afterAll(async () => { await t.close(); await fake.close(); });
  beforeEach(() => { fake.reset(); sockets.length = 0; });

  it('a generation and a run watch outlive several access tokens; one shared refresh at a time; onTokens sees each', async () => {
    const rec = recordingFetch();
    const seen: TokenPair[] = [];
    const { client } = await newUser(t, { WebSocket: TrackedWebSocket as unknown as typeof WebSocket, fetch: rec.fetch, onTokens: (tokens) => { seen.push(tokens); } });
    fake.script({ chunks: words(50), chunkDelayMs: 100 }); // ~5 s per model call
    const wf = await client.workflows.create({ name: 'slow', agents: [{ type: 'coder', model: 'gpt-test' }] });
    const run = await client.workflows.execute(wf.id, { task: 'a todo API' });
    const watch = client.runs.watch(run.id);
    const stream = client.stream.generate({ prompt: 'a slow one', model: 'gpt-test' });
    const tokens: string[] = [];
    const events: RunEvent[] = [];
    await Promise.all([
      (async () => { for await (const token of stream) tokens.push(token); })(),
      (async () => { for await (const event of watch) events.push(event); })(),
    ]);

    const result = await stream.result;
    expect(tokens).toEqual(words(50));
    expect(result.output).toBe(words(50).join(''));
    const final = await watch.result;
    expect(final.status).toBe('succeeded');
    expect(events.at(-1)!.event).toBe('complete');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

    // Each stayed on its one connection, which was re-authenticated with fresh tokens.
    expect(sockets).toHaveLength(2);
    for (const socket of sockets) {
      expect(socket.authTokens.length).toBeGreaterThanOrEqual(3);
      expect(new Set(socket.authTokens).size).toBe(socket.authTokens.length);
    }
    // Every refresh succeeded (a rotating refresh token presented twice would be refused and the session revoked),
    // each told onTokens (seen[0] is the registration), and the renewed tokens are the refreshed ones.
    const refreshes = rec.calls.filter((c) => c.url.endsWith('/auth/refresh'));
    expect(refreshes.length).toBeGreaterThanOrEqual(2);
    expect(refreshes.every((c) => c.status === 200)).toBe(true);
    expect(seen).toHaveLength(refreshes.length + 1);
    const issued = new Set(seen.map((s) => s.accessToken));
    expect(sockets.flatMap((s) => s.authTokens).every((token) => issued.has(token))).toBe(true);
    expect((await client.verify()).valid).toBe(true);
  });

  it('without a refresh token nothing is renewed: the server closes the generation at expiry with token_expired', async () => {
    const { session, ip } = await newUser(t);
    const client = clientFor(t, { accessToken: session.accessToken }, { WebSocket: TrackedWebSocket as unknown as typeof WebSocket }, ip);
    fake.script({ chunks: words(50), chunkDelayMs: 100 });
    const error = await client.stream.generate({ prompt: 'a slow one', model: 'gpt-test' }).result.catch(fail);
    expect(error).toMatchObject({ status: 401, code: 'token_expired' });
    expect(sockets).toHaveLength(1);
    expect(sockets[0]!.authTokens).toEqual([session.accessToken]);
  });

  it('an API key channel is left alone (API keys do not expire): one auth frame', async () => {
    const { client: owner, ip } = await newUser(t);
    const key = await owner.apiKeys.create({ name: 'stream', scopes: ['read:code', 'write:code'] });
    const client = clientFor(t, { apiKey: key.key }, { WebSocket: TrackedWebSocket as unknown as typeof WebSocket }, ip);
    fake.script({ chunks: words(25), chunkDelayMs: 100 });
    const result = await client.stream.generate({ prompt: 'a slow one', model: 'gpt-test' }).result;
    expect(result.output).toBe(words(25).join(''));
    expect(sockets).toHaveLength(1);
    expect(sockets[0]!.authTokens).toEqual([key.key]);
  });

  it('streaming with an expired access token refreshes before connecting', async () => {
    const { session, ip } = await newUser(t);
    await sleep(2100); // the access token has expired
    const seen: TokenPair[] = [];
    const client = clientFor(t, { accessToken: session.accessToken, refreshToken: session.refreshToken }, { WebSocket: TrackedWebSocket as unknown as typeof WebSocket, onTokens: (tokens) => { seen.push(tokens); } }, ip);
    const result = await client.stream.generate({ prompt: 'hello world script', language: 'python' }).result;
    expect(result.model).toBe('sandbox');
    // Refreshed first, then connected once with the new token (not refused, not reconnected).
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(sockets).toHaveLength(1);
    expect(sockets[0]!.authTokens[0]).toBe(seen[0]!.accessToken);
  });
});
