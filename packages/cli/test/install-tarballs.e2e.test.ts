/**
 * The published packages install like a user installs them (issue 29): `npm run pack:release -- --with-deps`
 * packs @codeloom/protocol, @codeloom/client and @codeloom/cli (and their two third-party dependencies) into a
 * scratch folder, `npm install -g --prefix SCRATCH … --offline` installs them with no registry, and then, against
 * a started server: the `codeloom` command (help, register, login, generate with a relative --out from a scratch
 * working directory, and the server commands' message), and the SDK from an ES module and from CommonJS.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.js';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The environment without the npm_* variables of an enclosing `npm test` (they would point npm at the workspace). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

const npmVersion = spawnSync(NPM, ['--version'], { env: cleanEnv(), encoding: 'utf8', timeout: 30_000 });
const canPack = npmVersion.status === 0 && process.platform !== 'win32';
if (!canPack) console.log(`skipping the installed-package test (packages/cli/test/install-tarballs.e2e.test.ts): npm cannot run here (${npmVersion.error?.message ?? npmVersion.stderr ?? `exit ${npmVersion.status}`})`);

async function sh(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeout?: number }) {
  try {
    const child = exec(cmd, args, { cwd: opts.cwd, env: opts.env, timeout: opts.timeout ?? 30_000 });
    child.child.stdin?.end(opts.input ?? '');
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number | string; stdout: string; stderr: string; message: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? err.message };
  }
}

const ESM = `import { CodeGenClient, CodeloomError, NotFoundError } from '@codeloom/client';
const client = new CodeGenClient({ environment: 'production' }); // CODELOOM_API_KEY and CODELOOM_BASE_URL
const identity = await client.authenticate();
const result = await client.generate({ prompt: 'hello world', language: 'python' });
const missing = await client.projects.get('prj_missing').catch((e) => e);
console.log(JSON.stringify({ email: identity.user.email, files: result.files.length, notFound: missing instanceof NotFoundError && CodeloomError.isInstance(missing) }));
`;

const CJS = `const sdk = require('@codeloom/client');
const { CodeGenClient, NotFoundError } = sdk;
const client = new CodeGenClient({ environment: 'production' });
(async () => {
  const identity = await client.authenticate();
  const models = await client.models.list();
  const missing = await client.projects.get('prj_missing').catch((e) => e);
  console.log(JSON.stringify({ email: identity.user.email, models: models.map((m) => m.id), notFound: missing instanceof NotFoundError,
    file: require.resolve('@codeloom/client'), defaultExport: sdk.default === CodeGenClient || typeof sdk.default === 'function' }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe.skipIf(!canPack)('the release tarballs installed globally, offline, in a scratch prefix', () => {
  let t: TestServer;
  let scratch: string;
  let prefix: string;
  let bin: string;
  let lib: string;
  const email = `installed-${Date.now()}@example.com`;
  const password = 'installed password 1';
  const env = (extra: Record<string, string> = {}) => cleanEnv({ CODELOOM_CONFIG_DIR: join(scratch, 'config'), CODELOOM_BASE_URL: t.url, CODELOOM_API_KEY: '', ...extra });
  const codeloom = (args: string[], opts: { cwd?: string; input?: string } = {}) => sh(bin, args, { cwd: opts.cwd ?? scratch, env: env(), ...(opts.input !== undefined ? { input: opts.input } : {}) });

  beforeAll(async () => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'codeloom-release-')));
    prefix = join(scratch, 'prefix');
    mkdirSync(prefix);
    bin = join(prefix, 'bin', 'codeloom');
    lib = join(prefix, 'lib');
    t = await startTestServer();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('packs protocol, client and cli (not the server) and installs them with npm install -g --offline', async () => {
    const packed = await sh(process.execPath, [join(ROOT, 'scripts/pack-release.mjs'), '--out', join(scratch, 'release'), '--with-deps', '--json'], { cwd: ROOT, env: cleanEnv(), timeout: 120_000 });
    expect(packed.code, packed.stderr).toBe(0);
    const { packages, deps } = JSON.parse(packed.stdout) as { packages: Array<{ name: string; file: string }>; deps: Array<{ name: string; file: string }> };
    expect(packages.map((p) => p.name)).toEqual(['@codeloom/protocol', '@codeloom/client', '@codeloom/cli']);
    expect(deps.map((d) => d.name).sort()).toEqual(['@sinclair/typebox', 'ws']);
    const cli = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8'));
    expect(cli.private).toBeUndefined();
    expect(Object.keys(cli.dependencies).sort()).toEqual(['@codeloom/client', '@codeloom/protocol', 'ws']);

    const installed = await sh(NPM, ['install', '-g', '--prefix', prefix, ...packages.map((p) => p.file), ...deps.map((d) => d.file), '--offline', '--no-audit', '--no-fund'], { cwd: scratch, env: cleanEnv(), timeout: 120_000 });
    expect(installed.code, installed.stderr).toBe(0);
    expect(existsSync(bin)).toBe(true);
    expect(readdirSync(join(lib, 'node_modules/@codeloom')).sort()).toEqual(['cli', 'client', 'protocol']);
    const client = JSON.parse(readFileSync(join(lib, 'node_modules/@codeloom/client/package.json'), 'utf8'));
    for (const f of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts']) expect(existsSync(join(lib, 'node_modules/@codeloom/client', f)), f).toBe(true);
    expect(client.exports['.']).toMatchObject({ import: { types: './dist/index.d.ts', default: './dist/index.js' }, require: { types: './dist/index.d.cts', default: './dist/index.cjs' } });
  }, 180_000);

  it('codeloom --help, register, login, generate (relative --out against the working directory), and the server commands say where they run', async () => {
    expect(existsSync(bin), 'the install step failed').toBe(true);
    const help = await codeloom(['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('codeloom — the Codeloom command line');

    const register = await codeloom(['register', '--email', email, '--name', 'Installed User', '--json'], { input: `${password}\n` });
    expect(register.code, register.stderr).toBe(0);
    expect(JSON.parse(register.stdout).user).toMatchObject({ email });
    expect((await codeloom(['logout'])).code).toBe(0);
    const login = await codeloom(['login', '--email', email], { input: `${password}\n` });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(email);

    const work = join(scratch, 'work', 'sub');
    mkdirSync(work, { recursive: true });
    const gen = await codeloom(['generate', 'CLI that counts words', '--language', 'python', '--out', 'generated'], { cwd: work });
    expect(gen.code, gen.stderr).toBe(0);
    const written = readdirSync(join(work, 'generated'), { recursive: true });
    expect(written.length).toBeGreaterThan(0);
    expect(existsSync(join(scratch, 'generated'))).toBe(false);
    expect(existsSync(join(prefix, 'generated'))).toBe(false);

    // From a checkout, `npm run cli` runs in the repository root; INIT_CWD (where `npm run` was typed) is where a
    // relative --out lands, as it does for the installed command.
    const fromNpm = join(scratch, 'work', 'npm-run');
    mkdirSync(fromNpm, { recursive: true });
    const viaScript = await sh(process.execPath, [join(ROOT, 'scripts/cli.mjs'), 'generate', 'CLI that counts words', '--language', 'python', '--out', 'generated'], { cwd: ROOT, env: env({ INIT_CWD: fromNpm }), timeout: 60_000 });
    expect(viaScript.code, viaScript.stderr).toBe(0);
    expect(readdirSync(join(fromNpm, 'generated'), { recursive: true }).length).toBeGreaterThan(0);
    // The README's alias, `node CHECKOUT/scripts/cli.mjs`, typed in another directory (no npm, so no INIT_CWD).
    const fromAlias = join(scratch, 'work', 'alias');
    mkdirSync(fromAlias, { recursive: true });
    const aliasEnv = env();
    delete aliasEnv.INIT_CWD;
    const viaAlias = await sh(process.execPath, [join(ROOT, 'scripts/cli.mjs'), 'generate', 'CLI that counts words', '--language', 'python', '--out', 'generated'], { cwd: fromAlias, env: aliasEnv, timeout: 60_000 });
    expect(viaAlias.code, viaAlias.stderr).toBe(0);
    expect(readdirSync(join(fromAlias, 'generated'), { recursive: true }).length).toBeGreaterThan(0);
    expect(existsSync(join(ROOT, 'generated'))).toBe(false);

    for (const command of ['migrate', 'admin']) {
      const server = await codeloom(command === 'admin' ? ['admin', 'users'] : [command]);
      expect(server.code).toBe(2);
      expect(server.stderr).toContain(`codeloom: ${command} runs on the server`);
      expect(server.stderr).toContain(`npm run --silent cli -- ${command}`);
      expect(server.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|at .*\.js:\d+/);
    }
  }, 120_000);

  it('the SDK works from an ES module and from CommonJS in the prefix', async () => {
    expect(existsSync(bin), 'the install step failed').toBe(true);
    const key = await codeloom(['keys', 'create', 'sdk', '--json']);
    expect(key.code, key.stderr).toBe(0);
    const sdkEnv = env({ CODELOOM_API_KEY: JSON.parse(key.stdout).key });
    // Scripts in PREFIX/lib resolve packages from PREFIX/lib/node_modules, where `npm install -g` put them.
    writeFileSync(join(lib, 'sdk-esm.mjs'), ESM);
    writeFileSync(join(lib, 'sdk-cjs.cjs'), CJS);
    const esm = await sh(process.execPath, ['sdk-esm.mjs'], { cwd: lib, env: sdkEnv });
    expect(esm.code, esm.stderr).toBe(0);
    expect(JSON.parse(esm.stdout)).toEqual({ email, files: expect.any(Number), notFound: true });
    const cjs = await sh(process.execPath, ['sdk-cjs.cjs'], { cwd: lib, env: sdkEnv });
    expect(cjs.code, cjs.stderr).toBe(0);
    expect(cjs.stderr).not.toContain('ExperimentalWarning');
    const r = JSON.parse(cjs.stdout);
    expect(r).toMatchObject({ email, notFound: true, defaultExport: true });
    expect(r.models).toContain('sandbox');
    expect(r.file).toBe(join(lib, 'node_modules/@codeloom/client/dist/index.cjs'));
  }, 60_000);
});
