/**
 * The optional install phase (CODELOOM_VERIFY_INSTALL): `npm install --ignore-scripts` against a registry
 * (a tiny local one here, speaking npm's registry protocol), then the checks without network with the
 * installed packages mounted read-only. Off by default: the same project then fails to find the package.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GeneratedFile } from '@codeloom/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/load-config.js';
import { VerificationService } from './verification-service.js';

const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping the install-phase tests: ${probe.reason}`);

const PROJECT: GeneratedFile[] = [
  { path: 'package.json', content: JSON.stringify({ name: 'uses-shout', type: 'module', scripts: { test: 'node --test' }, dependencies: { 'shout-lite': '1.0.0' } }) },
  { path: 'test/shout.test.js', content: "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport shout from 'shout-lite';\ntest('shouts', () => { assert.equal(shout('hi'), 'HI!'); });\n" },
];

describe.skipIf(!probe.available)('the install phase', () => {
  let registry: Server;
  let url = '';
  let work = '';
  let requests: string[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'codeloom-registry-'));
    mkdirSync(join(work, 'package'));
    writeFileSync(join(work, 'package/package.json'), JSON.stringify({ name: 'shout-lite', version: '1.0.0', main: 'index.js', scripts: { postinstall: 'touch ran-postinstall' } }));
    writeFileSync(join(work, 'package/index.js'), "module.exports = (s) => s.toUpperCase() + '!';\n");
    execFileSync('tar', ['czf', join(work, 'shout.tgz'), '-C', work, 'package']);
    const tgz = readFileSync(join(work, 'shout.tgz'));
    registry = createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === '/shout-lite') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
          name: 'shout-lite', 'dist-tags': { latest: '1.0.0' },
          versions: { '1.0.0': { name: 'shout-lite', version: '1.0.0', main: 'index.js', dist: {
            tarball: `${url}/shout-lite/-/shout-lite-1.0.0.tgz`,
            shasum: createHash('sha1').update(tgz).digest('hex'),
            integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
          } } },
        }));
      } else if (req.url === '/shout-lite/-/shout-lite-1.0.0.tgz') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tgz);
      } else res.writeHead(404).end('{}');
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(registry.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => registry.close(() => resolve()));
    rmSync(work, { recursive: true, force: true });
  });

  it('installs from the registry without running install scripts, then checks offline with the packages', async () => {
    requests = [];
    const service = new VerificationService(loadConfig({ CODELOOM_VERIFY_INSTALL: 'true', CODELOOM_VERIFY_NPM_REGISTRY: `${url}/` }));
    const v = await service.verify('javascript', [...PROJECT, { path: 'check-no-script.test.js', content: "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { existsSync } from 'node:fs';\ntest('no install script ran', () => { assert.ok(existsSync('node_modules/shout-lite/index.js')); assert.equal(existsSync('node_modules/shout-lite/ran-postinstall'), false); });\n" }], { attempt: 1 });
    const report = JSON.stringify(v.checks, null, 1);
    expect(v.checks.map((c) => c.name), report).toEqual(['install', 'syntax', 'test']);
    expect(v.status, report).toBe('passed');
    expect(v.tests, report).toEqual({ passed: 2, failed: 0 });
    expect(requests).toContain('/shout-lite/-/shout-lite-1.0.0.tgz');
  }, 60_000);

  it('is off by default: the package is missing and the tests fail', async () => {
    const v = await new VerificationService(loadConfig({})).verify('javascript', PROJECT, { attempt: 1 });
    expect(v.checks.map((c) => c.name)).toEqual(['syntax', 'test']);
    expect(v.status).toBe('failed');
    expect(v.checks[1]!.output).toMatch(/shout-lite/);
  }, 60_000);
});
