/**
 * The optional install phase (CODELOOM_VERIFY_INSTALL): the manifest is checked first (only registry
 * dependencies; anything else fails the install check before anything runs), then `npm install
 * --ignore-scripts` in a sandbox without network whose only way out is the registry proxy on a Unix socket
 * (a tiny local registry here, speaking npm's registry protocol under a path prefix like a mirror's), then the
 * checks in the same sandbox once the relay has closed and the other files are written. Off by default: the same project
 * then fails to find the package.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GeneratedFile } from '@codeloom/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load-config.js';
import { needsInstall, planInstall, runWithInstall, sandboxNpmEnv } from './install-phase.js';
import type { CheckRun, CheckSpec, RunHooks, SandboxFile, SandboxRunner } from './sandbox-runner.js';
import { VerificationService } from './verification-service.js';

const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping the sandboxed install-phase tests: ${probe.reason}`);
/** The runner's registry relay (the `registrySocket` hook); without it a sandboxed install has no way out at all. */
const hasHook = readFileSync(new URL('./sandbox-runner.ts', import.meta.url), 'utf8').includes('registrySocket');
if (!hasHook) console.log('skipping the sandboxed install: the runner has no registrySocket hook yet');

const PREFIX = '/registry';
const TEST_FILE = { path: 'test/shout.test.js', content: "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport shout from 'shout-lite';\ntest('shouts', () => { assert.equal(shout('hi'), 'HI!'); });\n" };
const manifest = (dependencies: Record<string, string>) => ({ path: 'package.json', content: JSON.stringify({ name: 'uses-shout', type: 'module', scripts: { test: 'node --test' }, dependencies }) });
const PROJECT: GeneratedFile[] = [manifest({ 'shout-lite': '1.0.0' }), TEST_FILE];
/** Once the install has ended the relay is closed: the checks cannot reach the registry. */
const RELAY_CLOSED = { path: 'relay-closed.test.js', content: "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { connect } from 'node:net';\ntest('the registry relay is closed', async () => {\n  const code = await new Promise((resolve) => connect(4873, '127.0.0.1').on('connect', () => resolve('CONNECTED')).on('error', (e) => resolve(e.code)));\n  assert.equal(code, 'ECONNREFUSED');\n});\n" };

/** A GET over a Unix socket. */
function getOver(socketPath: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ socketPath, path }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => { body += d; }).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
}

describe('the install phase', () => {
  let registry: Server;
  let elsewhere: Server;
  let url = '';
  let elsewhereUrl = '';
  let work = '';
  let requests: string[] = [];
  let elsewhereRequests: string[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'codeloom-registry-'));
    mkdirSync(join(work, 'package'));
    writeFileSync(join(work, 'package/package.json'), JSON.stringify({ name: 'shout-lite', version: '1.0.0', main: 'index.js', scripts: { postinstall: 'touch ran-postinstall' } }));
    writeFileSync(join(work, 'package/index.js'), "module.exports = (s) => s.toUpperCase() + '!';\n");
    execFileSync('tar', ['czf', join(work, 'shout.tgz'), '-C', work, 'package']);
    const tgz = readFileSync(join(work, 'shout.tgz'));
    const dist = (tarball: string) => ({ tarball, shasum: createHash('sha1').update(tgz).digest('hex'), integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}` });
    const packument = (name: string, tarball: string) => JSON.stringify({ name, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name, version: '1.0.0', main: 'index.js', dist: dist(tarball) } } });
    elsewhere = createServer((req, res) => { elsewhereRequests.push(req.url ?? ''); res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tgz); });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as { port: number }).port}`;
    registry = createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === `${PREFIX}/shout-lite`) {
        // The registry's own absolute tarball URL, as registries write them: npm is made to fetch it through the relay.
        res.writeHead(200, { 'content-type': 'application/json' }).end(packument('shout-lite', `${url}${PREFIX}/shout-lite/-/shout-lite-1.0.0.tgz`));
      } else if (req.url === `${PREFIX}/shout-lite/-/shout-lite-1.0.0.tgz`) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tgz);
      } else if (req.url === `${PREFIX}/tarball-elsewhere`) {
        // A (hostile or broken) registry naming a tarball on another host.
        res.writeHead(200, { 'content-type': 'application/json' }).end(packument('tarball-elsewhere', `${elsewhereUrl}/tarball-elsewhere-1.0.0.tgz`));
      } else res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(registry.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => registry.close(() => resolve()));
    await new Promise<void>((resolve) => elsewhere.close(() => resolve()));
    rmSync(work, { recursive: true, force: true });
  });

  it('needs an install only for JavaScript/TypeScript with dependencies or devDependencies', () => {
    expect(needsInstall('javascript', PROJECT)).toBe(true);
    expect(needsInstall('typescript', [{ path: 'package.json', content: '{"devDependencies":{"x":"1"}}' }])).toBe(true);
    expect(needsInstall('javascript', [{ path: 'package.json', content: '{"optionalDependencies":{"x":"1"}}' }])).toBe(false);
    expect(needsInstall('python', PROJECT)).toBe(false);
    expect(needsInstall('javascript', [{ path: 'package.json', content: '{ nope' }])).toBe(false);
  });

  describe('with a stand-in runner', () => {
    const runnerThat = (run: (files: SandboxFile[], checks: CheckSpec[], hooks: RunHooks) => Promise<Partial<CheckRun>>) => {
      const calls: Array<{ files: SandboxFile[]; checks: CheckSpec[]; hooks: RunHooks }> = [];
      const runner = { run: async (files: SandboxFile[], checks: CheckSpec[], hooks: RunHooks) => {
        calls.push({ files, checks, hooks });
        const first = await run(files, checks, hooks);
        return { checks: checks.map((c, i) => ({ name: c.name, command: c.argv.join(' '), exit_code: 0, duration_ms: 1, output: '', ...(i === 0 ? first : {}) })), timedOut: false };
      } } as unknown as SandboxRunner;
      return { runner, calls };
    };
    const plan = async (files: GeneratedFile[]) => {
      const p = await planInstall(files, `${url}${PREFIX}/`);
      if ('refused' in p) throw new Error(p.refused.output);
      return p;
    };
    const CHECKS: CheckSpec[] = [{ name: 'test', argv: ['npm', 'test'] }];

    it('refuses a manifest naming URL, git, file, link and shorthand dependencies before anything runs', async () => {
      const files = [{ path: 'package.json', content: JSON.stringify({ dependencies: { ok: '^1.0.0', tarball: 'https://evil.example/e.tgz', meta: 'http://169.254.169.254/latest/meta-data/', repo: 'git+ssh://git@github.com/u/r.git', short: 'u/r' }, devDependencies: { local: 'file:..', lnk: 'link:/etc' } }) }, TEST_FILE];
      const planned = await planInstall(files, `${url}${PREFIX}/`);
      if (!('refused' in planned)) throw new Error('not refused');
      const check = planned.refused;
      expect(check).toMatchObject({ name: 'install', exit_code: 1, command: 'npm install --ignore-scripts --no-audit --no-fund --loglevel=error' });
      for (const name of ['tarball', 'meta', 'repo', 'short']) expect(check.output).toContain(`package.json dependencies["${name}"]`);
      for (const name of ['local', 'lnk']) expect(check.output).toContain(`package.json devDependencies["${name}"]`);
      expect(check.output).not.toContain('"ok"');
      expect(check.output).toMatch(/Nothing was installed\.$/);
    });

    it('runs npm first in the checks\' sandbox with no network of its own: the registry proxy\'s socket, the relay settings, the manifest alone, the other files after', async () => {
      requests = [];
      let socket = '';
      const { runner, calls } = runnerThat(async (_files, _checks, hooks) => {
        socket = hooks.registrySocket!;
        expect(statSync(socket).isSocket()).toBe(true);
        // The socket reaches the configured registry, under its path.
        const packument = await getOver(socket, `${PREFIX}/shout-lite`);
        expect(packument.status).toBe(200);
        expect(JSON.parse(packument.body).name).toBe('shout-lite');
        expect((await getOver(socket, '/elsewhere')).status).toBe(404);
        return {};
      });
      const files = [...PROJECT, { path: 'package-lock.json', content: '{"lockfileVersion":3,"packages":{}}' }];
      const run = await runWithInstall(runner, await plan(files), files, CHECKS, { env: { CI: '1' } });
      const { files: first, checks, hooks } = calls[0]!;
      expect(first.map((f) => f.path)).toEqual(['package.json', 'package-lock.json']);
      expect(checks.map((c) => c.name)).toEqual(['install', 'test']);
      expect(hooks.later).toEqual({ afterCheck: 0, files: [TEST_FILE] });
      expect(hooks).not.toHaveProperty('network');
      expect(hooks.env).toEqual({ CI: '1', ...sandboxNpmEnv(`${PREFIX}/`) });
      expect(hooks.env).toMatchObject({ npm_config_registry: `http://127.0.0.1:4873${PREFIX}/`, npm_config_replace_registry_host: 'always' });
      expect(Object.keys(hooks.env!).filter((k) => /proxy/i.test(k))).toEqual([]);
      expect(requests).toEqual([`${PREFIX}/shout-lite`]);
      expect(run.checks.map((c) => c.name)).toEqual(['install', 'test']);
      // The proxy is gone once the run ended.
      expect(existsSync(socket)).toBe(false);
    });

    it('leaves out a lock file whose tarballs are on another registry, and says so', async () => {
      const { runner, calls } = runnerThat(async () => ({ output: 'added 1 package' }));
      const streamed: string[] = [];
      const lock = { path: 'package-lock.json', content: JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/shout-lite': { version: '1.0.0', resolved: 'https://registry.npmjs.org/shout-lite/-/shout-lite-1.0.0.tgz' } } }) };
      const run = await runWithInstall(runner, await plan([...PROJECT, lock]), [...PROJECT, lock], CHECKS, { onOutput: (_, text) => streamed.push(text) });
      expect(calls[0]!.files.map((f) => f.path)).toEqual(['package.json']);
      const install = run.checks[0]!;
      expect(install.exit_code).toBe(0);
      expect(install.output).toMatch(/^package-lock\.json was not used[^\n]*\n.*node_modules\/shout-lite.*\nadded 1 package$/s);
      expect(streamed[0]).toMatch(/^package-lock\.json was not used/);
    });

    it('closes the proxy when the runner fails', async () => {
      let socket = '';
      const runner = { run: async (_f: SandboxFile[], _c: CheckSpec[], hooks: RunHooks) => { socket = hooks.registrySocket!; throw new Error('bwrap broke'); } } as unknown as SandboxRunner;
      await expect(runWithInstall(runner, await plan(PROJECT), PROJECT, CHECKS, {})).rejects.toThrow('bwrap broke');
      expect(existsSync(socket)).toBe(false);
    });
  });

  describe.skipIf(!probe.available)('in the sandbox', () => {
    const service = () => new VerificationService(loadConfig({ CODELOOM_VERIFY_INSTALL: 'true', CODELOOM_VERIFY_NPM_REGISTRY: `${url}${PREFIX}/` }));

    it.skipIf(!hasHook)('installs from the registry through the proxy without running install scripts, then checks offline with the packages', async () => {
      requests = [];
      elsewhereRequests = [];
      const v = await service().verify('javascript', [...PROJECT, { path: 'check-no-script.test.js', content: "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { existsSync } from 'node:fs';\ntest('no install script ran', () => { assert.ok(existsSync('node_modules/shout-lite/index.js')); assert.equal(existsSync('node_modules/shout-lite/ran-postinstall'), false); });\n" }, RELAY_CLOSED], { attempt: 1 });
      const report = JSON.stringify(v.checks, null, 1);
      expect(v.checks.map((c) => c.name), report).toEqual(['install', 'syntax', 'test']);
      expect(v.status, report).toBe('passed');
      expect(v.tests, report).toEqual({ passed: 3, failed: 0 });
      // The packument's absolute tarball URL was fetched through the relay and the proxy, under the registry's path.
      expect(requests).toEqual(expect.arrayContaining([`${PREFIX}/shout-lite`, `${PREFIX}/shout-lite/-/shout-lite-1.0.0.tgz`]));
      expect(elsewhereRequests).toEqual([]);
    }, 90_000);

    it.skipIf(!hasHook)('does not leave the registry when a packument names a tarball on another host', async () => {
      requests = [];
      elsewhereRequests = [];
      const v = await service().verify('javascript', [manifest({ 'tarball-elsewhere': '1.0.0' }), TEST_FILE], { attempt: 1 });
      const report = JSON.stringify(v.checks, null, 1);
      expect(v.checks[0]!.name).toBe('install');
      expect(v.checks[0]!.exit_code, report).not.toBe(0);
      expect(v.checks[0]!.output, report).toMatch(/404/);
      expect(v.status).toBe('failed');
      // npm rewrote the foreign tarball URL onto the relay (replace-registry-host), so it went to the registry.
      expect(requests).toEqual([`${PREFIX}/tarball-elsewhere`, `${PREFIX}/tarball-elsewhere-1.0.0.tgz`]);
      expect(elsewhereRequests).toEqual([]);
    }, 90_000);

    it('refuses a manifest with a URL or git dependency before installing: nothing is fetched and the checks are skipped', async () => {
      requests = [];
      elsewhereRequests = [];
      const files = [manifest({ 'shout-lite': '1.0.0', evil: `${elsewhereUrl}/evil.tgz`, repo: 'git+https://github.com/u/r.git' }), TEST_FILE];
      const v = await service().verify('javascript', files, { attempt: 1 });
      const report = JSON.stringify(v.checks, null, 1);
      expect(v.checks.map((c) => c.name), report).toEqual(['install', 'syntax', 'test']);
      expect(v.status).toBe('failed');
      expect(v.checks[0]!.exit_code).toBe(1);
      expect(v.checks[0]!.duration_ms).toBe(0);
      expect(v.checks[0]!.output).toContain(`package.json dependencies["evil"]: "${elsewhereUrl}/evil.tgz" is a URL (http:), not the registry`);
      expect(v.checks[0]!.output).toContain('package.json dependencies["repo"]: "git+https://github.com/u/r.git" is a git repository (git+https:)');
      expect(v.checks.slice(1).every((c) => c.skipped), report).toBe(true);
      expect(requests).toEqual([]);
      expect(elsewhereRequests).toEqual([]);
    }, 60_000);

    it('is off by default: the package is missing and the tests fail', async () => {
      const v = await new VerificationService(loadConfig({})).verify('javascript', PROJECT, { attempt: 1 });
      expect(v.checks.map((c) => c.name)).toEqual(['syntax', 'test']);
      expect(v.status).toBe('failed');
      expect(v.checks[1]!.output).toMatch(/shout-lite/);
    }, 60_000);
  });
});
