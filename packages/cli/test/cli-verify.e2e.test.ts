import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config/load-config.js';
import { VerificationService } from '../../server/src/modules/verify/verification-service.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.js';
import { registerUser, request } from '../../server/test/helpers/http.js';

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const exec = promisify(execFile);
const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping codeloom generate --verify: ${probe.reason}`);

/** `codeloom generate --verify`: the server's sandbox verdict printed after the files. */
describe.skipIf(!probe.available)('codeloom generate --verify', () => {
  let t: TestServer;
  let key = '';
  beforeAll(async () => {
    t = await startTestServer();
    const user = await registerUser(t.url, { ip: '10.45.0.1' });
    key = (await request(`${t.url}/api/v1/api-keys`, { method: 'POST', token: user.token, body: { name: 'cli' } })).body.key;
  });
  afterAll(async () => { await t?.close(); });

  it('prints the verification verdict and exits 0 when it passed', async () => {
    const env = { ...process.env, CODELOOM_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'codeloom-cli-')), CODELOOM_BASE_URL: t.url, CODELOOM_API_KEY: key };
    const { stderr } = await exec(process.execPath, [CLI, 'generate', 'script to track expenses', '--language', 'bash', '--context', 'includeTests=true', '--verify'], { env, timeout: 60_000 });
    expect(stderr).toMatch(/verification: passed, tests [1-9]\d* passed \/ 0 failed, 1 attempt\(s\)/);
    const bad = await exec(process.execPath, [CLI, 'generate', 'x', '--repair', '9'], { env, timeout: 30_000 }).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { code: number }).code).toBe(2);
  }, 90_000);

  it('codeloom eval runs the checkout\'s eval and writes its JSON report', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'codeloom-eval-')), 'report.json');
    const { stdout } = await exec(process.execPath, [CLI, 'eval', '--model', 'sandbox', '--only', 'c/gcd', '--out', out], { timeout: 90_000 });
    expect(stdout).toMatch(/\| c\/gcd \| generate \| 0\/1 \| 0\.00 \|/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.summary).toMatchObject({ model: 'sandbox', tasks: 1, samples: 1, 'pass@1': 0 });
    expect(report.tasks[0]).toMatchObject({ task: 'c/gcd', status: 'failed' });
  }, 120_000);
});
