import { afterEach, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from './helpers/spawn-server.js';
import { registerUser, request } from './helpers/http.js';
import { nextIp } from './helpers/test-server.js';

/**
 * CODELOOM_REQUEST_LOG, read off the built server's standard output (pino JSON lines): which requests
 * get a `request completed` line in each mode, and that the line carries no credentials.
 */
interface LogLine { level: number; msg: string; reqId?: string; method?: string; url?: string; route?: string | null; statusCode?: number; responseTime?: number }

const requestLines = (s: SpawnedServer): LogLine[] => s.output().split('\n').filter((l) => l.startsWith('{'))
  .map((l) => JSON.parse(l) as LogLine).filter((l) => l.msg === 'request completed');

let server: SpawnedServer | undefined;
afterEach(async () => { await server?.stop(); server = undefined; });

/** Six 200s (one with a secret in its query), one 401, one 503 (the model's upstream refuses connections). */
async function traffic(mode: string | undefined, extra: Record<string, string> = {}) {
  server = await spawnServer({
    LOG_LEVEL: 'info', ...(mode ? { CODELOOM_REQUEST_LOG: mode } : {}), ...extra,
    OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', CODELOOM_OPENAI_MODELS: 'gone', CODELOOM_UPSTREAM_RETRIES: '0',
  });
  const { token } = await registerUser(server.url, { ip: nextIp() });
  for (let i = 0; i < 5; i++) expect((await request(`${server.url}/healthz`)).status).toBe(200);
  expect((await request(`${server.url}/healthz?token=very-secret-value`)).status).toBe(200);
  expect((await request(`${server.url}/api/v1/user/profile`, { token: 'cl_live_not-a-real-key' })).status).toBe(401);
  expect((await request(`${server.url}/api/v1/generate`, { token, body: { prompt: 'hi', model: 'gone' } })).status).toBe(503);
  // Lines are written synchronously before the answer leaves, but stdout reaches us asynchronously.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { lines: requestLines(server), output: server.output(), token };
}

describe('request logging (CODELOOM_REQUEST_LOG)', () => {
  it('errors (the default): only the 5xx answer, at warn, with its reqId, method, path and route', async () => {
    const { lines } = await traffic(undefined);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line!.level).toBe(40);
    expect(line).toMatchObject({ method: 'POST', url: '/api/v1/generate', route: '/api/v1/generate', statusCode: 503 });
    expect(line!.reqId).toMatch(/^req_/);
    expect(typeof line!.responseTime).toBe('number');
  });

  it('off: no request lines at all, not even for the 5xx', async () => {
    const { lines, output } = await traffic('off');
    expect(lines).toEqual([]);
    expect(output).toContain('listening on');
  });

  it('sampled: one request in CODELOOM_REQUEST_LOG_SAMPLE, plus every 5xx', async () => {
    const { lines } = await traffic('sampled', { CODELOOM_REQUEST_LOG_SAMPLE: '3' });
    // Register, 6 × healthz, the 401: 8 non-5xx requests → the 3rd and 6th; then the 503.
    expect(lines.map((l) => l.statusCode)).toEqual([200, 200, 503]);
    expect(lines.filter((l) => l.level === 30)).toHaveLength(2);
  });

  it('all: one line per request, and never a credential or a query string', async () => {
    const { lines, output, token } = await traffic('all');
    expect(lines.map((l) => `${l.method} ${l.url} ${l.statusCode}`)).toEqual([
      'POST /api/v1/auth/register 201',
      ...Array(6).fill('GET /healthz 200'),
      'GET /api/v1/user/profile 401',
      'POST /api/v1/generate 503',
    ]);
    expect(new Set(lines.map((l) => l.reqId)).size).toBe(lines.length);
    expect(output).not.toContain('very-secret-value');
    expect(output).not.toContain('cl_live_not-a-real-key');
    expect(output).not.toContain(token);
  });
});
