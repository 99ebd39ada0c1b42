import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.js';
import { registerUser, request } from '../../server/test/helpers/http.js';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const exec = promisify(execFile);

/** `codeloom projects revisions|diff|restore|download` (the built command as a subprocess against a running server). */
describe('codeloom projects: history', () => {
  let t: TestServer;
  let dir: string;
  let user: Awaited<ReturnType<typeof registerUser>>;
  const cli = async (args: string[]) => {
    try {
      const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { env: { ...process.env, CODELOOM_CONFIG_DIR: dir, CODELOOM_BASE_URL: t.url, CODELOOM_API_KEY: '' }, timeout: 30_000, cwd: dir });
      return { code: 0, stdout, stderr };
    } catch (e) {
      const err = e as { code: number; stdout: string; stderr: string };
      return { code: err.code, stdout: err.stdout, stderr: err.stderr };
    }
  };

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('build first: npm run build');
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'codeloom-cli-history-'));
    user = await registerUser(t.url, { ip: '10.45.0.1', name: 'Grace' });
    expect((await cli(['login', '--email', user.email, '--password', user.password])).code).toBe(0);
  });
  afterAll(async () => { await t?.close(); });

  it('lists revisions, shows a diff, restores and downloads', async () => {
    const api = (path: string) => `${t.url}/api/v1/projects${path}`;
    const p = (await request(api(''), { token: user.token, body: { name: 'cli history' } })).body;
    await request(api(`/${p.id}/files/notes.txt`), { token: user.token, method: 'PUT', body: { content: 'one\n' } });
    await request(api(`/${p.id}/files/notes.txt`), { token: user.token, method: 'PUT', body: { content: 'two\n' } });

    const list = await cli(['projects', 'revisions', p.id]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^r3 {2}\S+ {2}1 file\(s\) {2}Grace {2}Write notes\.txt$/);
    expect(list.stdout).toContain('r1');
    expect(JSON.parse((await cli(['projects', 'revisions', p.id, '--json', '--limit', '1'])).stdout).data).toHaveLength(1);

    const diff = await cli(['projects', 'diff', p.id, '3']);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-one\n+two\n');

    const restore = await cli(['projects', 'restore', p.id, '2']);
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout.trim()).toBe('Restored revision 2 as r4 (1 file(s) changed).');
    expect((await cli(['projects', 'restore', p.id, '2'])).stdout.trim()).toBe('The files already are as at revision 2 (latest: r4).');

    const dl = await cli(['projects', 'download', p.id, '3']);
    expect(dl.code, dl.stderr).toBe(0);
    expect(dl.stdout).toMatch(new RegExp(`^Wrote ${p.id}-r3\\.zip \\(\\d+ bytes\\)\\.`));
    expect(execFileSync('unzip', ['-p', join(dir, `${p.id}-r3.zip`), 'notes.txt']).toString()).toBe('two\n');
    const out = join(dir, 'now.zip');
    expect((await cli(['projects', 'download', p.id, '--out', out])).code).toBe(0);
    expect(execFileSync('unzip', ['-p', out, 'notes.txt']).toString()).toBe('one\n');
    expect(readFileSync(out).subarray(0, 4).toString('hex')).toBe('504b0304');

    for (const args of [['projects', 'diff', p.id], ['projects', 'diff', p.id, 'x'], ['projects', 'restore', p.id, '0'], ['projects', 'revisions']]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
    }
    const missing = await cli(['projects', 'diff', p.id, '9']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^codeloom: not_found:/);
  });
});
