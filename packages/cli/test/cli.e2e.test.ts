import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.js';
import { registerUser, request } from '../../server/test/helpers/http.js';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const exec = promisify(execFile);

/** The built `codeloom` command run as a subprocess against a running server (npm test builds it first). */
describe('codeloom (client commands)', () => {
  let t: TestServer;
  let configDir: string;
  let user: Awaited<ReturnType<typeof registerUser>>;
  const env = () => ({ ...process.env, CODELOOM_CONFIG_DIR: configDir, CODELOOM_BASE_URL: t.url, CODELOOM_API_KEY: '' });
  const cli = async (args: string[], input?: string) => {
    try {
      const child = exec(process.execPath, [CLI, ...args], { env: env(), timeout: 30_000 });
      if (input !== undefined) { child.child.stdin!.end(input); }
      const { stdout, stderr } = await child;
      return { code: 0, stdout, stderr };
    } catch (e) {
      const err = e as { code: number; stdout: string; stderr: string };
      return { code: err.code, stdout: err.stdout, stderr: err.stderr };
    }
  };

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('build first: npm run build');
    // The sandbox model priced (1.25 USD per million prompt tokens, 2.5 per million completion tokens) so `usage` shows a cost.
    t = await startTestServer({ env: { CODELOOM_MODEL_PRICES: JSON.stringify({ sandbox: { input: 1.25, output: 2.5 } }) } });
    configDir = mkdtempSync(join(tmpdir(), 'codeloom-cli-'));
    user = await registerUser(t.url, { ip: '10.44.0.1' });
  });
  afterAll(async () => { await t?.close(); });

  it('refuses commands before login with a one-line error and exit 1', async () => {
    const r = await cli(['whoami']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^codeloom: unauthorized: Not signed in/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('logs in (password on stdin), stores tokens with mode 0600, and knows who it is', async () => {
    const login = await cli(['login', '--email', user.email], `${user.password}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(user.email);
    const file = join(configDir, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ baseUrl: t.url, email: user.email });
    const who = await cli(['whoami', '--json']);
    expect(JSON.parse(who.stdout)).toMatchObject({ email: user.email, organization: { plan: 'free' } });
  });

  it('a wrong password exits 1 with the error code', async () => {
    const r = await cli(['login', '--email', user.email, '--password', 'wrong password!', '--base-url', t.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^codeloom: invalid_credentials:/);
    await cli(['login', '--email', user.email, '--password', user.password]);
  });

  it('creates, lists and revokes keys', async () => {
    const created = JSON.parse((await cli(['keys', 'create', 'ci', '--json'])).stdout);
    expect(created.key).toMatch(/^cl_live_/);
    const list = JSON.parse((await cli(['keys', 'list', '--json'])).stdout);
    expect(list.data.map((k: { id: string }) => k.id)).toContain(created.id);
    expect((await cli(['keys', 'revoke', created.id])).code).toBe(0);
    const again = await cli(['keys', 'revoke', created.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^codeloom: not_found:/);
  });

  it('generate streams the text to stdout and writes the files with --out', async () => {
    const out = mkdtempSync(join(tmpdir(), 'codeloom-gen-'));
    const r = await cli(['generate', 'REST API for todos', '--language', 'ts', '--context', 'framework=fastify', '--context', 'includeTests=true', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const history = await request(`${t.url}/api/v1/generations?limit=1`, { token: user.token });
    const result = history.body.data[0];
    expect(r.stdout).toBe(result.output);
    expect(r.stderr).toContain(`${result.files.length} file(s)`);
    for (const f of result.files) expect(readFileSync(join(out, f.path), 'utf8')).toBe(f.content);
  });

  it('projects and models, in text and JSON', async () => {
    const created = JSON.parse((await cli(['projects', 'create', 'todo service', '--template', 'node-cli', '--json'])).stdout);
    expect(created.id).toMatch(/^prj_/);
    expect((await cli(['projects', 'list'])).stdout).toContain('todo service');
    const files = JSON.parse((await cli(['projects', 'files', created.id, '--json'])).stdout);
    expect(files.data.map((f: { path: string }) => f.path)).toContain('package.json');
    expect((await cli(['projects', 'files', created.id, 'package.json'])).stdout).toContain('"name"');
    expect((await cli(['models'])).stdout).toMatch(/\* sandbox/);
    expect((await cli(['models'])).stdout).toContain('Only the template model sandbox (not AI) is connected');
  });

  it('run executes a workflow, shows its steps and exits 0 with the files', async () => {
    const wf = await request(`${t.url}/api/v1/agents/create`, { token: user.token, body: { name: 'team', agents: [{ type: 'planner', model: 'sandbox' }, { type: 'coder', model: 'sandbox' }] } });
    const out = mkdtempSync(join(tmpdir(), 'codeloom-run-'));
    const r = await cli(['run', wf.body.id, 'CLI to track expenses', '--require', 'database=sqlite', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    // Subscribed after execute, yet every step shows from its start (the server replays the run's events).
    expect(r.stderr).toMatch(/step 1 planner: running[\s\S]*step 1 planner: succeeded[\s\S]*step 2 coder: running[\s\S]*step 2 coder: succeeded/);
    expect(r.stdout).toMatch(/^succeeded: /);
    const run = await request(`${t.url}/api/v1/runs?limit=1`, { token: user.token });
    for (const f of run.body.data[0].result.files) expect(existsSync(join(out, f.path))).toBe(true);
  });

  it('run --max-tokens and --max-cost-usd give the run its ceilings; a run that would cross one fails with budget_exceeded', async () => {
    const wf = await request(`${t.url}/api/v1/agents/create`, { token: user.token, body: { name: 'team', agents: [{ type: 'coder', model: 'sandbox' }] } });
    const r = await cli(['run', wf.body.id, 'CLI to track expenses', '--max-tokens', '5', '--max-cost-usd', '0.25', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const run = JSON.parse(r.stdout);
    expect(run).toMatchObject({ status: 'failed', limits: { max_tokens: 5, max_cost_usd: 0.25 }, error: { code: 'budget_exceeded' } });
    expect(run.error.message).toMatch(/max_tokens of 5/);
    expect((await cli(['run', wf.body.id, 'x', '--max-tokens', '1.5'])).code).toBe(2);
    expect((await cli(['run', wf.body.id, 'x', '--max-cost-usd', '0'])).code).toBe(2);
    const tooPrecise = await cli(['run', wf.body.id, 'x', '--max-cost-usd', '0.0000001']);
    expect(tooPrecise.code).toBe(1);
    expect(tooPrecise.stderr).toMatch(/^codeloom: validation_failed:/);
  });

  it('keys create/update/list carry per-key limits; bad limit values are usage errors', async () => {
    const created = JSON.parse((await cli(['keys', 'create', 'batch', '--rpm', '30', '--tpm', '5000', '--monthly-tokens', '100000', '--json'])).stdout);
    expect(created.limits).toEqual({ requests_per_minute: 30, tokens_per_minute: 5000, monthly_tokens: 100000 });
    const updated = await cli(['keys', 'update', created.id, '--name', 'batch jobs', '--monthly-tokens', 'none', '--rpm', '10']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toContain('batch jobs  10 req/min, 5,000 tokens/min');
    const listed = await cli(['keys', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`${created.id} .*batch jobs .*10 req/min, 5,000 tokens/min  last used`));
    const over = await cli(['keys', 'update', created.id, '--tpm', '999999999']);
    expect(over.code).toBe(1);
    expect(over.stderr).toMatch(/^codeloom: validation_failed:/);
    expect((await cli(['keys', 'create', 'x', '--rpm', 'none'])).code).toBe(2);
    expect((await cli(['keys', 'update', created.id])).code).toBe(2);
    expect((await cli(['keys', 'revoke', created.id])).code).toBe(0);
  });

  it('usage prints a table per day, model or key, and the API report with --json', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const api = await request(`${t.url}/api/v1/usage?group_by=model`, { token: user.token });
    expect(api.body.totals.requests).toBeGreaterThan(0); // the generate and run tests above made model calls
    const json = await cli(['usage', '--by', 'model', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(api.body);
    const byDay = await cli(['usage', '--from', today, '--to', today]);
    expect(byDay.stdout).toContain(`Usage ${today} to ${today} (production), per day`);
    const totals = (await request(`${t.url}/api/v1/usage?from=${today}&to=${today}`, { token: user.token })).body.totals;
    const n = (x: number) => x.toLocaleString('en-US');
    expect(byDay.stdout).toMatch(new RegExp(`^DAY +REQUESTS +FAILED +PROMPT +COMPLETION +TOTAL TOKENS +COST \\(USD\\)$`, 'm'));
    // The cost, to the micro-dollar: each call rounded half up, so close to (but not always exactly) the tokens at the price.
    expect(totals.cost_usd).toBeGreaterThan(0);
    expect(Math.abs(totals.cost_usd - (totals.prompt_tokens * 1.25 + totals.completion_tokens * 2.5) / 1e6)).toBeLessThanOrEqual(totals.requests * 0.5e-6 + 1e-12);
    const cost = totals.cost_usd.toFixed(6).replace('.', '\\.');
    expect(byDay.stdout).toMatch(new RegExp(`^${today} +${n(totals.requests)} +${n(totals.failed_requests)} +${n(totals.prompt_tokens)} +${n(totals.completion_tokens)} +${n(totals.total_tokens)} +${cost}$`, 'm'));
    expect(byDay.stdout).toMatch(new RegExp(`^total +${n(totals.requests)} .* ${cost}$`, 'm'));
    expect(byDay.stdout).toMatch(new RegExp(`^total +${n(totals.requests)} `, 'm'));
    expect((await cli(['usage', '--by', 'api_key'])).stdout).toMatch(/^\(session \/ OAuth\) +\d/m);
    expect((await cli(['usage', '--from', '2000-01-01', '--to', '2000-01-02'])).stdout).toContain('(no model calls in this period)');
    const bad = await cli(['usage', '--from', today, '--to', '2000-01-01']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^codeloom: validation_failed:/);
    expect((await cli(['usage', '--by', 'week'])).code).toBe(2);
  });

  it('usage errors exit 2; --help works on every command', async () => {
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['generate'])).code).toBe(2);
    expect((await cli(['--nope'])).code).toBe(2);
    // Words that name JavaScript object properties are unknown commands and values like any other.
    const proto = await cli(['constructor', '--help']);
    expect(proto.code).toBe(2);
    expect(proto.stderr).toContain('unknown command: constructor');
    expect((await cli(['usage', '--by', 'constructor'])).code).toBe(2);
    for (const c of ['register', 'login', 'logout', 'whoami', 'keys', 'generate', 'projects', 'workflows', 'agents', 'run', 'runs', 'models', 'usage', 'serve', 'migrate', 'admin']) {
      const h = await cli([c, '--help']);
      expect(h.code, c).toBe(0);
      expect(h.stdout).toContain(`codeloom ${c}`);
    }
  }, 60_000);

  it('an unreachable server is a clear one-line error', async () => {
    const r = await cli(['models', '--base-url', 'http://127.0.0.1:9']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('logout ends the session on the server and forgets the credentials, but keeps the server URL', async () => {
    const file = join(configDir, 'credentials.json');
    const before = JSON.parse(readFileSync(file, 'utf8'));
    const out = await cli(['logout']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`Signed out of ${t.url}`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ baseUrl: t.url });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await request(`${t.url}/api/v1/auth/verify`, { token: before.accessToken })).status).toBe(401);

    // Without --base-url or CODELOOM_BASE_URL the next commands still go to that server.
    const bare = async (args: string[], input?: string) => {
      const { CODELOOM_BASE_URL: _drop, ...rest } = env();
      const child = execFile(process.execPath, [CLI, ...args], { env: rest, timeout: 30_000 });
      if (input !== undefined) child.stdin!.end(input);
      const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? 1)));
      return code;
    };
    expect((await cli(['whoami'])).stderr).toMatch(/^codeloom: unauthorized: Not signed in/);
    expect(await bare(['login', '--email', user.email], `${user.password}\n`)).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ baseUrl: t.url, email: user.email });
    expect(await bare(['whoami'])).toBe(0);
  });
});

const haveTmux = spawnSync('sh', ['-c', 'command -v tmux']).status === 0;
if (!haveTmux) console.log('skipping the terminal test of codeloom generate: tmux is not installed');

describe.skipIf(!haveTmux)('codeloom generate in a real terminal (tmux)', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t?.close(); });

  it('shows the streamed code and then the file summary', async () => {
    const u = await registerUser(t.url, { ip: '10.44.0.9' });
    const key = await request(`${t.url}/api/v1/api-keys`, { token: u.token, body: { name: 'tmux' } });
    const session = `codeloom-${process.pid}`;
    const cmd = `CODELOOM_BASE_URL=${t.url} CODELOOM_API_KEY=${key.body.key} CODELOOM_CONFIG_DIR=${mkdtempSync(join(tmpdir(), 'cl-tmux-'))} ${process.execPath} ${CLI} generate "bash script that backs up a folder" -l bash; echo EXIT=$?; sleep 30`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '160', '-y', '60', cmd]);
    try {
      let screen = '';
      for (let i = 0; i < 100 && !screen.includes('EXIT='); i++) {
        await new Promise((r) => setTimeout(r, 100));
        screen = execFileSync('tmux', ['capture-pane', '-p', '-S', '-', '-t', session]).toString();
      }
      expect(screen).toContain('```bash');
      expect(screen).toContain('#!/usr/bin/env bash');
      expect(screen).toMatch(/— \d+ file\(s\), \d+ tokens/);
      expect(screen).toContain('EXIT=0');
    } finally {
      spawnSync('tmux', ['kill-session', '-t', session]);
    }
  }, 30_000);
});
