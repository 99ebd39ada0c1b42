import { execFile } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../../server/test/helpers/spawn-server.js';
import { registerUser, request } from '../../server/test/helpers/http.js';
import { startOpenAIFake, type FakeVendor } from '../../server/test/fakes/openai-fake.js';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const exec = promisify(execFile);
const SECRET = 'sk-upstream-CLI-SECRET-91b2';

/**
 * `codeloom deployments …` and `codeloom admin grant|revoke` against a real server process (SQLite, no
 * CODELOOM_SECRET_KEY, debug logging): the API key works upstream and is never in the CLI's output, the
 * server's answers or any line the server logs; the server makes its own key (0600) and says once that
 * instances sharing a database must share one.
 */
describe('codeloom deployments', () => {
  let dataDir: string;
  let configDir: string;
  let server: SpawnedServer;
  let fake: FakeVendor;
  let admin: Awaited<ReturnType<typeof registerUser>>;
  let other: Awaited<ReturnType<typeof registerUser>>;
  const outputs: string[] = [];
  const cli = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', CODELOOM_DATA_DIR: dataDir, CODELOOM_CONFIG_DIR: configDir, CODELOOM_BASE_URL: server.url, CODELOOM_API_KEY: '' }, timeout: 30_000 });
      outputs.push(stdout, stderr);
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      outputs.push(e.stdout, e.stderr);
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'codeloom-deploy-'));
    configDir = mkdtempSync(join(tmpdir(), 'codeloom-deploy-cfg-'));
    fake = await startOpenAIFake({ record: true, script: { requireApiKey: SECRET } });
    server = await spawnServer({ CODELOOM_DATA_DIR: dataDir, LOG_LEVEL: 'debug', CODELOOM_REQUEST_LOG: 'all' });
    admin = await registerUser(server.url, { ip: '10.91.0.1' });
    other = await registerUser(server.url, { ip: '10.91.0.2' });
  }, 60_000);
  afterAll(async () => { await server?.stop(); await fake?.close(); });

  it('adds, lists, tests, updates and removes deployments with an admin-scope API key', async () => {
    const key = await request(`${server.url}/api/v1/api-keys`, { token: admin.token, body: { name: 'ops', scopes: ['admin'] } });
    expect(key.status, key.text).toBe(201);
    expect((await cli('login', '--api-key', key.body.key)).code).toBe(0);
    const added = await cli('deployments', 'add', '--name', 'gpu-1', '--provider', 'openai', '--url', `${fake.url}/v1`, '--models', 'coder=coder-up', '--api-key', SECRET, '--price', '1/2', '--json');
    expect(added.code, added.stderr).toBe(0);
    const created = JSON.parse(added.stdout);
    expect(created).toMatchObject({ name: 'gpu-1', has_api_key: true, models: [{ id: 'coder', upstream_model: 'coder-up', price: { input: 1, output: 2 } }] });
    const list = await cli('deployments', 'list');
    expect(list.stdout).toContain(created.id);
    expect(list.stdout).toContain('coder');
    const tested = await cli('deployments', 'test', created.id);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/^OK: coder answered in \d+ ms/);
    // The model serves at once, with the key upstream.
    const chat = await request(`${server.url}/openai/v1/chat/completions`, { token: admin.token, body: { model: 'coder', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
    expect(chat.status, chat.text).toBe(200);
    expect(fake.requests.at(-1)!.body.model).toBe('coder-up');
    const updated = await cli('deployments', 'update', created.id, '--weight', '5', '--rpm', '100');
    expect(updated.stdout).toMatch(/weight 5 {2}rpm 100/);
    const bad = await cli('deployments', 'add', '--name', 'x', '--provider', 'openai', '--url', 'ftp://nope', '--models', 'y');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('base_url');
    expect((await cli('deployments', 'remove', created.id)).stdout).toBe(`Removed ${created.id}.\n`);
    expect((await cli('deployments', 'list')).stdout).not.toContain(created.id);
  });

  it('admin grant and revoke', async () => {
    expect((await request(`${server.url}/api/v1/admin/deployments`, { token: other.token })).status).toBe(403);
    expect((await cli('admin', 'grant', other.email)).stdout).toContain('is now an administrator');
    expect((await request(`${server.url}/api/v1/admin/deployments`, { token: other.token })).status).toBe(200);
    expect((await cli('admin', 'revoke', other.email)).stdout).toContain('no longer an administrator');
    expect((await request(`${server.url}/api/v1/admin/deployments`, { token: other.token })).status).toBe(403);
    expect((await cli('admin', 'grant', 'nobody@example.com')).code).toBe(1);
  });

  it('the API key is in no output and no log line; the generated key file is 0600 and announced once', () => {
    const log = server.output();
    expect(log.length).toBeGreaterThan(1000); // debug logging: every request
    expect(log).not.toContain(SECRET);
    for (const o of outputs) expect(o).not.toContain(SECRET);
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
    expect(log.match(/instances sharing a database must share one key/gi)?.length ?? 0).toBe(1);
  });
});
