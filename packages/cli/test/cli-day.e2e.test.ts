/**
 * A whole day's work with the built `codeloom` command, run as a subprocess
 * against a real server (issue 16): register, login that keeps the good
 * credentials when a new one fails, workflows and agents, --page/--limit on
 * every list, clean --json (also through `npm run --silent cli`), and the
 * stderr line while a rate limit is waited out.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.js';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const exec = promisify(execFile);
type Result = { code: number; stdout: string; stderr: string };

describe('codeloom: a whole day\'s work', () => {
  let t: TestServer;
  let configDir: string;
  const env = (extra: Record<string, string> = {}) => ({ ...process.env, CODELOOM_CONFIG_DIR: configDir, CODELOOM_BASE_URL: t.url, CODELOOM_API_KEY: '', ...extra });
  const run = async (file: string, args: string[], options: { input?: string; env?: Record<string, string>; cwd?: string } = {}): Promise<Result> => {
    try {
      const child = exec(file, args, { env: env(options.env), timeout: 30_000, cwd: options.cwd });
      if (options.input !== undefined) child.child.stdin!.end(options.input);
      const { stdout, stderr } = await child;
      return { code: 0, stdout, stderr };
    } catch (e) {
      const err = e as Result;
      return { code: err.code, stdout: err.stdout, stderr: err.stderr };
    }
  };
  const cli = (args: string[], options: { input?: string; env?: Record<string, string> } = {}) => run(process.execPath, [CLI, ...args], options);
  const json = async (args: string[]) => {
    const r = await cli([...args, '--json']);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout);
  };
  const email = `day-${Date.now()}@example.com`;
  const password = 'correct horse battery';

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('build first: npm run build');
    t = await startTestServer();
    configDir = mkdtempSync(join(tmpdir(), 'codeloom-day-'));
  });
  afterAll(async () => { await t?.close(); });

  it('register creates the account and signs in (password on stdin)', async () => {
    const r = await cli(['register', '--email', email, '--name', 'Day User', '--json'], { input: `${password}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).user).toMatchObject({ email, name: 'Day User' });
    expect((await json(['whoami'])).email).toBe(email);
    const again = await cli(['register', '--email', email, '--name', 'Again', '--password', password]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^codeloom: conflict:/);
    expect((await cli(['register', '--email', email])).code).toBe(2);
  });

  it('a login that fails keeps the saved credentials; one that works replaces them', async () => {
    const file = join(configDir, 'credentials.json');
    const before = readFileSync(file, 'utf8');
    const bad = await cli(['login', '--api-key', 'cl_live_not_a_real_key']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^codeloom: invalid_token:/);
    expect(readFileSync(file, 'utf8')).toBe(before);
    const wrong = await cli(['login', '--email', email, '--password', 'wrong password!']);
    expect(wrong.code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect((await json(['whoami'])).email).toBe(email);

    const key = await json(['keys', 'create', 'laptop']);
    const good = await cli(['login', '--api-key', key.key]);
    expect(good.code, good.stderr).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ apiKey: key.key, email });
    expect((await json(['whoami'])).email).toBe(email);
    expect((await cli(['login', '--email', email, '--password', password])).code).toBe(0); // back to a session (keys need one)
  });

  it('workflows create, list, show, delete; run one', async () => {
    const created = await json(['workflows', 'create', 'team', '--agent', 'planner:sandbox', '--agent', 'coder,reviewer', '--config', 'max_iterations=1']);
    expect(created).toMatchObject({ id: expect.stringMatching(/^wfl_/), name: 'team', config: { max_iterations: 1 } });
    expect(created.agents.map((a: { type: string }) => a.type)).toEqual(['planner', 'coder', 'reviewer']);
    expect(created.agents[0].model).toBe('sandbox');
    const text = await cli(['workflows', 'show', created.id]);
    expect(text.stdout).toContain('planner (sandbox)');
    expect((await json(['workflows', 'list'])).data.map((w: { id: string }) => w.id)).toContain(created.id);
    expect((await cli(['workflows', 'create', 'bad', '--agent', 'wizard'])).code).toBe(2);
    expect((await cli(['workflows', 'create', 'none'])).code).toBe(2);

    const ran = await cli(['run', created.id, 'CLI to track expenses', '--json']);
    expect(ran.code, ran.stderr).toBe(0);
    const latest = (await json(['runs', 'list', '--limit', '1'])).data[0];
    expect(latest.workflow_id).toBe(created.id);
    const shown = await json(['runs', 'show', latest.id]);
    expect(shown.status).toBe('succeeded');
    expect(shown.steps.map((s: { agent: string }) => s.agent).slice(0, 3)).toEqual(['planner', 'coder', 'reviewer']);
    expect((await cli(['runs', 'show', latest.id])).stdout).toMatch(/succeeded/);

    expect((await json(['workflows', 'delete', created.id])).success).toBe(true);
    const gone = await cli(['workflows', 'show', created.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^codeloom: not_found:/);
  });

  it('agents create, list, show, delete', async () => {
    const agent = await json(['agents', 'create', 'reviewer bot', '--model', 'sandbox', '--config', 'temperature=0.2', '--config', 'specialization=reviewer']);
    expect(agent).toMatchObject({ id: expect.stringMatching(/^agt_/), model: 'sandbox', config: { temperature: 0.2, specialization: 'reviewer' } });
    expect((await json(['agents', 'show', agent.id])).name).toBe('reviewer bot');
    expect((await cli(['agents', 'list'])).stdout).toContain(agent.id);
    expect((await cli(['agents', 'create', 'no model'])).code).toBe(2);
    expect((await json(['agents', 'delete', agent.id])).success).toBe(true);
    expect((await cli(['agents', 'show', agent.id])).code).toBe(1);
  });

  it('--page and --limit work on every list', async () => {
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) await json(['projects', 'create', name]);
    const page2 = await json(['projects', 'list', '--page', '2', '--limit', '3']);
    expect(page2.pagination).toEqual({ page: 2, limit: 3, total: 5, total_pages: 2 });
    expect(page2.data.map((p: { name: string }) => p.name)).toEqual(['p2', 'p1']);
    const text = await cli(['projects', 'list', '--limit', '2']);
    expect(text.stdout.trim().split('\n')).toHaveLength(2);
    expect(text.stderr).toContain('page 1 of 3 (5 in all); next: --page 2');
    for (const list of [['workflows', 'list'], ['agents', 'list'], ['keys', 'list'], ['runs', 'list']]) {
      const page = await json([...list, '--page', '1', '--limit', '1']);
      expect(page.pagination, list.join(' ')).toMatchObject({ page: 1, limit: 1 });
      expect(page.data.length).toBeLessThanOrEqual(1);
    }
    const files = await json(['projects', 'files', page2.data[0].id, '--limit', '1']);
    expect(files.pagination.limit).toBe(1);
    const bad = await cli(['projects', 'list', '--limit', '500']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit takes an integer from 1 to 100/);
  });

  it('npm run --silent cli -- … --json prints clean JSON', async () => {
    const r = await run('npm', ['run', '--silent', 'cli', '--', 'projects', 'list', '--limit', '2', '--json'], { cwd: ROOT });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).pagination.limit).toBe(2);
  });
});

describe('codeloom while a rate limit is waited out', () => {
  let server: Server;
  let url: string;
  let hits = 0;
  beforeAll(async () => {
    // A scripted server: the first profile request is refused with 429 and Retry-After: 2, the next answers.
    server = createServer((req, res) => {
      hits++;
      if (hits === 1) {
        res.writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '2' });
        return res.end(JSON.stringify({ type: '/docs/errors#rate_limited', title: 'Too Many Requests', status: 429, code: 'rate_limited', detail: 'Per-minute limit of 100 requests reached.', request_id: 'req_1' }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'usr_1', email: 'wait@example.com', name: 'W', organization: { id: 'org_1', name: 'W', plan: 'free' }, permissions: ['read:code'], rate_limits: { requests_per_hour: 1000, tokens_per_minute: 1 }, environment: 'production' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); });

  it('says on stderr that it waits, with the seconds left; stdout stays clean JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-wait-'));
    const { stdout, stderr } = await exec(process.execPath, [CLI, 'whoami', '--json', '--base-url', url], { env: { ...process.env, CODELOOM_CONFIG_DIR: dir, CODELOOM_API_KEY: 'cl_live_x' }, timeout: 30_000 });
    expect(stderr).toMatch(/^codeloom: rate limited; retrying in [23] s \(retry 1 of 2\)$/m);
    expect(JSON.parse(stdout).email).toBe('wait@example.com');
    expect(hits).toBe(2);
  });
});
