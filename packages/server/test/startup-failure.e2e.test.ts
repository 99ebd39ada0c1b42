import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_MAIN } from './helpers/spawn-server.js';

/** The built server, started with a broken setting: what an operator sees. */
function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SERVER_MAIN], {
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', CODELOOM_DATA_DIR: mkdtempSync(join(tmpdir(), 'codeloom-start-')), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => { stdout += d; });
    child.stderr!.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

function expectOneLine(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) {
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.code).not.toBeNull();
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\bat .+:\d+:\d+\)?$/m); // no stack trace
  expect(result.stdout).not.toMatch(/listening/);
}

describe('start-up failures print one line naming the setting, and exit non-zero', () => {
  let occupied: Server;
  let busyPort: number;
  let closedPort: number;
  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    closedPort = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    occupied = createServer((socket) => socket.destroy());
    await new Promise<void>((r) => occupied.listen(0, '127.0.0.1', r));
    busyPort = (occupied.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => occupied.close(() => r())));

  it('an unreachable DATABASE_URL', async () => {
    expectOneLine(await start({ DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/x` }), new RegExp(`^Codeloom failed to start: DATABASE_URL: connect ECONNREFUSED 127\\.0\\.0\\.1:${closedPort}$`));
    expectOneLine(await start({ DATABASE_URL: `postgres://postgres@127.0.0.1:${busyPort}/x` }), /^Codeloom failed to start: DATABASE_URL: \S/);
    expectOneLine(await start({ DATABASE_URL: 'postgres://postgres@nonexistent.invalid:5432/x' }), /^Codeloom failed to start: DATABASE_URL: .*ENOTFOUND/);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('a DATABASE_URL with a role that does not exist', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.username = 'no_such_role_codeloom';
    expectOneLine(await start({ DATABASE_URL: url.toString() }), /^Codeloom failed to start: DATABASE_URL: .*no_such_role_codeloom/);
  });

  it('an unreachable REDIS_URL, without ioredis printing a stack of its own', async () => {
    expectOneLine(await start({ REDIS_URL: 'redis://127.0.0.1:1' }), /^Codeloom failed to start: REDIS_URL: connect ECONNREFUSED 127\.0\.0\.1:1$/);
    expectOneLine(await start({ REDIS_URL: 'redis://nonexistent.invalid:6379' }), /^Codeloom failed to start: REDIS_URL: .*ENOTFOUND/);
  });

  it('a data directory that cannot be created', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'codeloom-file-')), 'plain-file');
    writeFileSync(file, 'not a directory');
    expectOneLine(await start({ CODELOOM_DATA_DIR: join(file, 'data') }), /^Codeloom failed to start: CODELOOM_DATA_DIR: ENOTDIR/);
  });

  it('a port already in use', async () => {
    expectOneLine(await start({ PORT: String(busyPort) }), /^Codeloom failed to start: PORT: listen EADDRINUSE/);
  });

  it('invalid settings, one line each, exit 2', async () => {
    const result = await start({ PORT: 'abc', CODELOOM_ACCESS_TOKEN_TTL: '0', DATABASE_URL: 'not a url' });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).not.toMatch(/listening/);
    expect(result.stderr).not.toMatch(/\bat .+:\d+:\d+\)?$/m);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const setting of ['PORT', 'CODELOOM_ACCESS_TOKEN_TTL', 'DATABASE_URL']) expect(lines.filter((l) => new RegExp(`^Codeloom failed to start: ${setting}: \\S`).test(l))).toHaveLength(1);
    expect(lines).toContain('Codeloom failed to start: PORT: must be an integer (got "abc")');
  });

  it('a bad CODELOOM_MODEL_PRICES (bad JSON, wrong shape, a negative price, an unknown model) is refused, one line each', async () => {
    const bad = async (value: string, pattern: RegExp, code = 2) => {
      const result = await start({ CODELOOM_MODEL_PRICES: value });
      expect(result.code, result.stderr).toBe(code);
      expectOneLine(result, pattern);
    };
    await bad('{"sandbox": {input: 1}}', /^Codeloom failed to start: CODELOOM_MODEL_PRICES: not valid JSON \(.+\); expected \{"<model>": \{"input": 2\.5/);
    await bad('[1, 2]', /^Codeloom failed to start: CODELOOM_MODEL_PRICES: must be a JSON object of model id/);
    await bad('{"sandbox": {"input": 1, "output": 2, "cahced_input": 0.5}}', /^Codeloom failed to start: CODELOOM_MODEL_PRICES: "sandbox": unknown field "cahced_input" \(allowed: input, output, cached_input\)$/);
    await bad('{"sandbox": {"input": -1, "output": 2}}', /^Codeloom failed to start: CODELOOM_MODEL_PRICES: "sandbox"\.input must not be negative \(got -1\)$/);
    await bad('{"sandbox": {"input": "2.5", "output": 10}}', /^Codeloom failed to start: CODELOOM_MODEL_PRICES: "sandbox"\.input must be a number \(got "2\.5"\)$/);
    await bad('{"sandbox": {"input": 1}}', /^Codeloom failed to start: CODELOOM_MODEL_PRICES: "sandbox"\.output is required/);
    // The shape is right but the model is not configured: refused once the models are known (exit 1, like other start failures).
    await bad('{"gpt-4o": {"input": 2.5, "output": 10}}', /^Codeloom failed to start: CODELOOM_MODEL_PRICES: unknown model "gpt-4o"; configured: sandbox$/, 1);
  });

  it('OPENAI_BASE_URL without CODELOOM_OPENAI_MODELS is refused, saying what to set', async () => {
    const result = await start({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(result.code).toBe(2);
    expectOneLine(result, /^Codeloom failed to start: CODELOOM_OPENAI_MODELS: OPENAI_BASE_URL is set, so list the model ids to serve from it \(e\.g\. CODELOOM_OPENAI_MODELS=/);
    expect((await start({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', CODELOOM_OPENAI_MODELS: ' , ' })).stderr).toContain('CODELOOM_OPENAI_MODELS: OPENAI_BASE_URL is set');
  });
});
