/**
 * The SDK installs like a real package (issue 16): `npm pack` both packages,
 * install the tarballs into a fresh project outside the repository, and use
 * them from an ES module, from CommonJS and from strict TypeScript, against a
 * real server. Needs no registry: the one third-party dependency
 * (@sinclair/typebox) comes from the npm cache that `npm ci` filled
 * (--prefer-offline).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, startTestServer, type TestServer } from './helpers.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The environment without the npm_* variables of an enclosing `npm test` (they would point npm at the workspace). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

const ESM = `import { CodeGenClient, Codeloom, CodeloomError, NotFoundError, ERROR_CODES } from '@codeloom/client';
const client = new CodeGenClient({ apiKey: process.env.CODELOOM_API_KEY, environment: 'sandbox' });
const identity = await client.authenticate();
const result = await client.generate({ prompt: 'hello world', language: 'python', context: { includeTests: true } });
const missing = await client.projects.get('prj_missing').catch((e) => e);
console.log(JSON.stringify({ email: identity.user.email, environment: identity.credential.environment, model: result.model, files: result.files.length,
  notFound: missing instanceof NotFoundError && CodeloomError.isInstance(missing), codes: Object.keys(ERROR_CODES).length > 0, legacy: typeof Codeloom }));
`;

const CJS = `// CommonJS: require() loads the CommonJS build (dist/index.cjs, any Node 20); import() the ES module.
const viaRequire = require('@codeloom/client');
const client = new viaRequire.CodeGenClient({ environment: 'sandbox' }); // key and address from the environment
client.authenticate().then(async (identity) => {
  const sdk = await import('@codeloom/client');
  console.log(JSON.stringify({ email: identity.user.email, required: require.resolve('@codeloom/client').endsWith('index.cjs'), sameNames: Object.keys(viaRequire).sort().join() === Object.keys(sdk).sort().join() }));
}).catch((e) => { console.error(e); process.exit(1); });
`;

/** A CommonJS TypeScript caller (.cts under NodeNext): the require condition's types (dist/index.d.cts). */
const CTS = `import { CodeGenClient, CodeloomError, type GenerationResult } from '@codeloom/client';
import sdk = require('@codeloom/client');
const client = new CodeGenClient({ apiKey: 'k', environment: 'sandbox' });
export async function count(): Promise<number> {
  const result: GenerationResult = await client.generate({ prompt: 'x' });
  return result.files.length + (CodeloomError.isInstance(null) ? 1 : 0) + (typeof sdk.default === 'function' ? 1 : 0);
}
// @ts-expect-error an unknown environment is a type error here too
new CodeGenClient({ environment: 'staging' });
`;

const TS = `import { CodeGenClient, Codeloom, CodeloomError, RateLimitError, type GenerationResult, type Project, type VerifyResponse } from '@codeloom/client';

export async function main(): Promise<string> {
  const client = new CodeGenClient({ apiKey: 'cl_test_x', environment: 'sandbox', baseURL: 'http://127.0.0.1:8080', maxRetries: 3, onRetry: (i) => console.log(i.attempt, i.delayMs) });
  const identity: VerifyResponse = await client.authenticate();
  const result: GenerationResult = await client.generate({ prompt: 'x', context: { framework: 'express', includeTests: true, apiVersion: 2 } });
  const page = await client.projects.list({ page: 2, limit: 3 });
  const first: Project | undefined = page.data[0];
  try { await client.workflows.get('wfl_x', { maxRetries: 0 }); } catch (e) {
    if (e instanceof RateLimitError) return String(e.retryAfter);
    if (CodeloomError.isInstance(e)) return e.code + (e.requestId ?? '') + JSON.stringify(e.headers ?? {});
  }
  const legacy = new Codeloom({ apiKey: 'k' }, { environment: 'production' });
  // @ts-expect-error an unknown option is a type error
  new CodeGenClient({ enviroment: 'sandbox' });
  // @ts-expect-error so is an unknown environment
  new CodeGenClient({ environment: 'staging' });
  // @ts-expect-error context values are strings, numbers or booleans
  await client.generate({ prompt: 'x', context: { nested: { a: 1 } } });
  return identity.user.email + result.files.length + (first?.name ?? '') + legacy.environment;
}
`;

describe('@codeloom/client as an installed package', () => {
  let t: TestServer;
  let dir: string;
  let apiKey: string;
  let email: string;

  beforeAll(async () => {
    t = await startTestServer();
    const user = await newUser(t);
    email = user.email;
    apiKey = (await user.client.apiKeys.create({ name: 'installed' })).key;
    dir = mkdtempSync(join(tmpdir(), 'codeloom-install-'));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('packs with dist and types, installs from the tarballs, and works from ESM, CommonJS and strict TypeScript', async () => {
    const packed = await run(NPM, ['pack', '--json', '-w', 'packages/protocol', '-w', 'packages/client', '--pack-destination', dir], { cwd: ROOT, env: cleanEnv(), timeout: 60_000 });
    const tarballs = JSON.parse(packed.stdout) as Array<{ name: string; version: string; filename: string; files: Array<{ path: string }> }>;
    const byName = Object.fromEntries(tarballs.map((p) => [p.name, p]));
    const client = byName['@codeloom/client']!;
    const protocol = byName['@codeloom/protocol']!;
    for (const p of [client, protocol]) {
      const paths = p.files.map((f) => f.path);
      expect(paths).toContain('dist/index.js');
      expect(paths).toContain('dist/index.d.ts');
      if (p === client) for (const f of ['dist/index.cjs', 'dist/index.d.cts']) expect(paths).toContain(f);
      expect(paths).toContain('README.md');
      expect(paths.some((f) => f.includes('.test.') || f.endsWith('.tsbuildinfo'))).toBe(false);
    }
    // Versions in step: the client depends on exactly the protocol it was built with; neither is private.
    const manifests = ['client', 'protocol'].map((n) => JSON.parse(readFileSync(join(ROOT, 'packages', n, 'package.json'), 'utf8')));
    expect(manifests[0].dependencies['@codeloom/protocol']).toBe(manifests[1].version);
    expect(manifests[0].version).toBe(manifests[1].version);
    expect(manifests.map((m) => m.private)).toEqual([undefined, undefined]);

    const project = join(dir, 'consumer');
    await run('mkdir', ['-p', project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    await run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, protocol.filename), join(dir, client.filename)], { cwd: project, env: cleanEnv(), timeout: 60_000 });
    const installed = JSON.parse(readFileSync(join(project, 'node_modules/@codeloom/client/package.json'), 'utf8'));
    expect(installed.version).toBe(client.version);

    const env = cleanEnv({ CODELOOM_API_KEY: apiKey, CODELOOM_BASE_URL: t.url });
    writeFileSync(join(project, 'esm.mjs'), ESM);
    const esm = JSON.parse((await run(process.execPath, ['esm.mjs'], { cwd: project, env, timeout: 30_000 })).stdout);
    expect(esm).toEqual({ email, environment: 'sandbox', model: 'sandbox', files: expect.any(Number), notFound: true, codes: true, legacy: 'function' });

    writeFileSync(join(project, 'cjs.cjs'), CJS);
    const cjs = JSON.parse((await run(process.execPath, ['--no-warnings', 'cjs.cjs'], { cwd: project, env, timeout: 30_000 })).stdout);
    expect(cjs).toEqual({ email, required: true, sameNames: true });

    writeFileSync(join(project, 'consumer.ts'), TS);
    writeFileSync(join(project, 'consumer-cjs.cts'), CTS);
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, lib: ['ES2022', 'DOM'], types: [] },
      files: ['consumer.ts', 'consumer-cjs.cts'],
    }));
    const tsc = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project, env, timeout: 60_000 }).then(() => ({ code: 0, out: '' }), (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }));
    expect(tsc.out).toBe('');
    expect(tsc.code).toBe(0);
  }, 90_000);
});
