import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../../server/test/helpers/spawn-server.js';
import { registerUser } from '../../server/test/helpers/http.js';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const exec = promisify(execFile);
const ACCOUNTS = 61;

/** `codeloom admin users` against the database a real server wrote: the count it prints is the number of accounts it lists. */
describe('codeloom admin users', () => {
  let dataDir: string;
  let server: SpawnedServer | undefined;
  const emails: string[] = [];
  const cli = async (...args: string[]) => (await exec(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', CODELOOM_DATA_DIR: dataDir }, timeout: 30_000 })).stdout;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'codeloom-admin-'));
    server = await spawnServer({ CODELOOM_DATA_DIR: dataDir });
    for (let i = 0; i < ACCOUNTS; i++) emails.push((await registerUser(server.url, { ip: `10.77.${i >> 8}.${i & 255}` })).email.toLowerCase());
    await server.stop();
    server = undefined;
  }, 120_000);
  afterAll(async () => { await server?.stop(); });

  it('lists every account, and the count it prints equals the lines it lists', async () => {
    const lines = (await cli('admin', 'users')).trim().split('\n');
    const summary = lines.pop()!;
    expect(summary).toBe(`${ACCOUNTS} user(s)`);
    expect(lines).toHaveLength(ACCOUNTS);
    expect(lines.map((l) => l.split(/\s+/)[1]).sort()).toEqual([...emails].sort());
  });

  it('pages with --page and --limit, saying which part of the whole it shows', async () => {
    const first = (await cli('admin', 'users', '--limit', '50')).trim().split('\n');
    expect(first.pop()).toBe(`user(s) 1–50 of ${ACCOUNTS} (page 1 of 2)`);
    expect(first).toHaveLength(50);
    const second = (await cli('admin', 'users', '--page', '2', '--limit', '50')).trim().split('\n');
    expect(second.pop()).toBe(`user(s) 51–${ACCOUNTS} of ${ACCOUNTS} (page 2 of 2)`);
    expect(second).toHaveLength(ACCOUNTS - 50);
    expect(new Set([...first, ...second]).size).toBe(ACCOUNTS);
    expect((await cli('admin', 'users', '--page', '9', '--limit', '50')).trim()).toBe(`no user(s) on page 9 (${ACCOUNTS} in all, 2 page(s))`);
  });

  it('--json carries the same total as the data it lists', async () => {
    const all = JSON.parse(await cli('admin', 'users', '--json'));
    expect(all.total).toBe(ACCOUNTS);
    expect(all.data).toHaveLength(ACCOUNTS);
  });
});
