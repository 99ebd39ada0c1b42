/**
 * `codeloom run` on an engineer agent (issue 27 item 4): without a TTY, each tool call is printed on one
 * folded line as it starts and as it ends (its number, the tool, the command or path, the exit status or ok, the output's last
 * line). The sandbox model plays the engineer; where bubblewrap cannot run its `run checks` fails, and the
 * line says so.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.js';
import { registerUser, request } from '../../server/test/helpers/http.js';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const exec = promisify(execFile);

describe('codeloom run: an engineer\'s tool calls', () => {
  let t: TestServer;
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('build first: npm run build');
    t = await startTestServer();
  });
  afterAll(async () => { await t?.close(); });

  it('prints each call on one line as it ends, then the result', async () => {
    const u = await registerUser(t.url);
    await t.server.ctx.store.accounts.setPlanByEmail(u.email.toLowerCase(), 'enterprise');
    const key = await request(`${t.url}/api/v1/api-keys`, { method: 'POST', token: u.token, body: { name: 'cli' } });
    expect(key.status, key.text).toBe(201);
    const agent = await request(`${t.url}/api/v1/agents`, { method: 'POST', token: u.token, body: { name: 'eng', model: 'sandbox', config: { specialization: 'engineer' } } });
    const env = { ...process.env, CODELOOM_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'codeloom-eng-')), CODELOOM_BASE_URL: t.url, CODELOOM_API_KEY: key.body.key as string };
    const { stdout, stderr } = await exec(process.execPath, [CLI, 'run', agent.body.id, 'a CLI to track expenses', '--require', 'language=python'], { env, timeout: 60_000 });
    const all = stderr.split('\n').filter((l) => l.startsWith('  step 1 '));
    // Each call is printed as it starts (ending in …), then as it ends.
    const starts = all.filter((l) => l.endsWith(' …'));
    const lines = all.filter((l) => !l.endsWith(' …'));
    expect(starts.length).toBe(lines.length);
    expect(starts).toContainEqual(expect.stringMatching(/^ {2}step 1 \[\d+\] run checks …$/));
    expect(lines[0]).toBe('  step 1 [1] list_files → ok · The workspace is empty.');
    expect(lines.slice(1, -2).every((l) => /^ {2}step 1 \[\d+\] write_file \S+ → ok · Created \S+ \(\d+ bytes\)\.$/.test(l))).toBe(true);
    expect(lines.at(-2)).toMatch(/^ {2}step 1 \[\d+\] run checks → (exit \d+|failed)/);
    expect(lines.at(-1)).toMatch(/^ {2}step 1 \[\d+\] finish → ok$/);
    expect(stderr).toMatch(/step 1 engineer: succeeded/);
    expect(stdout).toMatch(/^succeeded: /);
  }, 90_000);
});
