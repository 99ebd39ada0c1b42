// The container image (Dockerfile, docs/deploy.md), built and run with podman (issue 29 item 3).
//
// Official base images cannot be pulled on CI machines, so a stand-in for node:20-bookworm-slim is
// built first: `mmdebstrap --variant=minbase bookworm` (cached for the day under the temp dir) plus
// this machine's Node, npm and Node headers at /usr/local, as the official image has them. The
// project's image is built with BASE_IMAGE pointing at it, started read-only as its non-root user,
// probed, registered with, generated with (the sandbox model), restarted on the same volume and
// stopped with SIGTERM (exit 0, "Codeloom stopped"). It runs when podman, runc and mmdebstrap are
// installed (.ci/run installs them) and podman can start a container; otherwise it says why.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/private-redis.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// runc and cgroupfs: these machines have cgroups v1 (hybrid) and no systemd; the ulimits are what runc may set here.
const PODMAN = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs'];
const LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=4096:4096'];
const BUILD_TIMEOUT = 20 * 60_000;
const day = new Date().toISOString().slice(0, 10);
const CACHE = join(tmpdir(), 'codeloom-container-test');
const ROOTFS_IMAGE = `localhost/codeloom-test-rootfs:${day}`;
const BASE_IMAGE = `localhost/codeloom-test-base:${day}-node${process.version.slice(1)}`;
const IMAGE = 'localhost/codeloom-test:latest';
const tag = `cl-test-${process.pid}`;

const missing = ['podman', 'runc', 'mmdebstrap'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0);
const skipReason = process.env.CODELOOM_SKIP_CONTAINER_TEST ? 'CODELOOM_SKIP_CONTAINER_TEST is set'
  : missing.length ? `${missing.join(', ')} not installed (apt-get install -y podman runc mmdebstrap; .ci/run does)` : '';
if (skipReason) console.log(`skipping container image test: ${skipReason}`);

interface Ran { status: number | null; stdout: string; stderr: string; ms: number }

/** Runs a command to its end (asynchronously: the test's timers keep running), keeping its output. */
function run(cmd: string, args: string[], opts: { timeout?: number; input?: string } = {}): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeout ?? 120_000);
    child.on('close', (status) => { clearTimeout(timer); resolve({ status, stdout, stderr, ms: Date.now() - started }); });
    child.stdin.end(opts.input ?? '');
  });
}
const podman = (args: string[], timeout?: number) => run('podman', [...PODMAN, ...args], { timeout });
/** The end of a long output: build logs are thousands of lines. */
const tail = (text: string, lines = 40) => text.trimEnd().split('\n').slice(-lines).join('\n');
async function must(step: string, ran: Promise<Ran>): Promise<Ran> {
  const r = await ran;
  if (r.status !== 0) throw new Error(`${step} failed (exit ${r.status}, ${r.ms} ms):\n${tail(r.stdout)}\n${tail(r.stderr)}`);
  return r;
}

const timings: Record<string, number> = {};
let unavailable = '';

/** The stand-in for node:20-bookworm-slim: Debian's minbase plus this machine's node, npm and headers under /usr/local. */
async function buildBaseImage(): Promise<void> {
  if ((await podman(['image', 'exists', BASE_IMAGE])).status === 0) return;
  mkdirSync(CACHE, { recursive: true });
  const tarball = join(CACHE, `bookworm-minbase-${day}.tar`);
  for (const old of readdirSync(CACHE)) if ((old.startsWith('bookworm-minbase-') || old.startsWith('partial-')) && join(CACHE, old) !== tarball) rmSync(join(CACHE, old), { force: true });
  if (!existsSync(tarball)) {
    const t = Date.now();
    const partial = join(CACHE, `partial-${process.pid}.tar`); // mmdebstrap writes a tarball when the name ends in .tar
    await must('mmdebstrap', run('mmdebstrap', ['--variant=minbase', '--include=ca-certificates', 'bookworm', partial], { timeout: 10 * 60_000 }));
    renameSync(partial, tarball);
    timings.mmdebstrap = Date.now() - t;
  }
  await must('podman import', podman(['import', tarball, ROOTFS_IMAGE], 5 * 60_000));
  // Can podman start a container at all here? If not, the test says why instead of failing.
  const probe = await podman(['run', '--rm', ...LIMITS, '--network', 'host', ROOTFS_IMAGE, 'true'], 120_000);
  if (probe.status !== 0) {
    unavailable = `podman cannot run a container on this machine (podman ${PODMAN.join(' ')} run --rm ${ROOTFS_IMAGE} true: exit ${probe.status}: ${tail(probe.stderr, 5)})`;
    return;
  }
  const prefix = dirname(dirname(process.execPath));
  const npm = join(prefix, 'lib/node_modules/npm');
  const headers = join(prefix, 'include/node');
  for (const need of [npm, headers]) if (!existsSync(need)) throw new Error(`the stand-in base image needs this machine's ${need}`);
  const ctx = join(CACHE, 'base-context');
  rmSync(ctx, { recursive: true, force: true });
  mkdirSync(join(ctx, 'ca'), { recursive: true });
  copyFileSync(process.execPath, join(ctx, 'node'));
  cpSync(npm, join(ctx, 'npm'), { recursive: true, verbatimSymlinks: true });
  cpSync(headers, join(ctx, 'include'), { recursive: true });
  // This machine's extra CAs (a TLS-inspecting egress proxy): the build's `npm ci` must trust them, as it would on such a network.
  const extraCas = '/usr/local/share/ca-certificates';
  if (existsSync(extraCas)) for (const f of readdirSync(extraCas)) if (f.endsWith('.crt')) copyFileSync(join(extraCas, f), join(ctx, 'ca', f));
  writeFileSync(join(ctx, 'Containerfile'), [
    `FROM ${ROOTFS_IMAGE}`,
    'COPY node /usr/local/bin/node',
    'COPY npm /usr/local/lib/node_modules/npm',
    'COPY include /usr/local/include/node',
    'COPY ca/ /usr/local/share/ca-certificates/',
    'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx'
      + ' && update-ca-certificates >/dev/null && node --version',
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
    'CMD ["node"]',
    '',
  ].join('\n'));
  await must('the stand-in base image', podman(['build', '--network', 'host', '--format', 'docker', '-t', BASE_IMAGE, ctx], 5 * 60_000));
  rmSync(ctx, { recursive: true, force: true });
}

/** Polls a URL until it answers 200 (or the container has exited). */
async function waitReady(url: string, name: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try { if ((await fetch(url)).status === 200) return; } catch { /* not listening yet */ }
    const state = await podman(['inspect', '--format', '{{.State.Status}}', name]);
    if (state.stdout.trim() === 'exited') throw new Error(`the container exited:\n${(await podman(['logs', name])).stdout}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer 200 within ${ms} ms:\n${(await podman(['logs', name])).stdout}`);
}

/** Starts the image as its own user, root file system read-only, /data on a named volume, on the host's network. */
async function start(name: string, port: number): Promise<string> {
  await must(`podman run ${name}`, podman(['run', '-d', '--name', name, ...LIMITS, '--network', 'host', '--read-only', '--tmpfs', '/tmp',
    '--health-interval', 'disable', '-v', `${tag}-data:/data`, '-e', `PORT=${port}`, '-e', 'LOG_LEVEL=warn', IMAGE]));
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/readyz`, name);
  return base;
}

async function json(res: Response): Promise<any> {
  const text = await res.text();
  try { return JSON.parse(text); } catch { throw new Error(`not JSON (${res.status}): ${text.slice(0, 300)}`); }
}

describe.skipIf(Boolean(skipReason))('the container image (podman)', () => {
  beforeAll(async () => {
    let t = Date.now();
    await buildBaseImage();
    timings.base = Date.now() - t;
    if (unavailable) { console.log(`skipping container image test: ${unavailable}`); return; }
    t = Date.now();
    await must('podman build (the project image)', podman(['build', '--network', 'host', '--format', 'docker', '--target', 'runtime',
      '--build-arg', `BASE_IMAGE=${BASE_IMAGE}`, '-t', IMAGE, '.'], BUILD_TIMEOUT));
    timings.build = Date.now() - t;
  }, BUILD_TIMEOUT + 15 * 60_000);

  afterAll(async () => {
    for (const n of ['a', 'b']) await podman(['rm', '-f', '-t', '0', `${tag}-${n}`]);
    await podman(['volume', 'rm', '-f', `${tag}-data`]);
    console.log(`container image test timings (ms): ${JSON.stringify(timings)}`);
  }, 120_000);

  it('is built as configured: non-root, HOST=0.0.0.0, PORT=8080, /data, a node HEALTHCHECK, SIGTERM', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const config = JSON.parse((await must('inspect', podman(['image', 'inspect', '--format', '{{json .Config}}', IMAGE]))).stdout);
    expect(config.User).toBe('10001:10001');
    expect(config.Env).toEqual(expect.arrayContaining(['HOST=0.0.0.0', 'PORT=8080', 'CODELOOM_DATA_DIR=/data', 'NODE_ENV=production']));
    expect(Object.keys(config.Volumes ?? {})).toEqual(['/data']);
    expect(config.StopSignal).toBe('SIGTERM');
    // The HEALTHCHECK is kept in the docker image format (podman build --format docker); podman shows it beside Config.
    const health = JSON.parse((await must('inspect', podman(['image', 'inspect', '--format', '{{json .HealthCheck}}', IMAGE]))).stdout);
    expect(health.Test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(health.Test[3]).toMatch(/\/healthz/);
    expect(config.Cmd[0]).toBe('node');
    // Production dependencies only: no compiler, test runner or bundler in the final image.
    const ls = await podman(['run', '--rm', ...LIMITS, '--health-interval', 'disable', IMAGE, 'node', '-e',
      "for (const m of ['typescript','vitest','esbuild','better-sqlite3','fastify']) { try { require.resolve(m + '/package.json', { paths: ['/app'] }); console.log(m, 'yes'); } catch { console.log(m, 'no'); } }"]);
    expect(ls.stdout.trim().split('\n')).toEqual(['typescript no', 'vitest no', 'esbuild no', 'better-sqlite3 yes', 'fastify yes']);
  }, 60_000);

  it('serves, passes its health check, registers, generates with the sandbox model, keeps its data on /data, and stops gracefully on SIGTERM', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const port = await freePort();
    let t = Date.now();
    const base = await start(`${tag}-a`, port);
    timings.start = Date.now() - t;
    expect((await podman(['exec', `${tag}-a`, 'id', '-u'])).stdout.trim()).toBe('10001');
    expect((await podman(['healthcheck', 'run', `${tag}-a`])).status).toBe(0);

    const account = { email: 'container@example.com', password: 'correct horse battery', name: 'Container' };
    const reg = await fetch(`${base}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(account) });
    expect(reg.status).toBe(201);
    const { token } = await json(reg);
    const gen = await fetch(`${base}/api/v1/generate`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ prompt: 'REST API for todos', language: 'typescript', model: 'sandbox' }) });
    const body = await json(gen);
    expect(gen.status, JSON.stringify(body)).toBe(200);
    expect(body.model).toBe('sandbox');
    expect(body.code.length).toBeGreaterThan(100);
    // The server commands of the CLI run inside (`codeloom migrate`).
    const migrate = await podman(['exec', `${tag}-a`, 'codeloom', 'migrate']);
    expect(migrate.status, migrate.stderr).toBe(0);
    expect(migrate.stdout).toMatch(/up to date/);

    t = Date.now();
    await must('podman stop', podman(['stop', '-t', '40', `${tag}-a`], 60_000));
    timings.stop = Date.now() - t;
    expect(timings.stop).toBeLessThan(30_000);
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', `${tag}-a`])).stdout.trim()).toBe('0');
    const logs = await podman(['logs', `${tag}-a`]);
    expect(logs.stdout).toMatch(/^Codeloom listening on http:\/\/\S+ \(storage: sqlite\)$/m);
    expect(logs.stdout).toMatch(/^Codeloom stopped$/m);

    // A new container on the same volume has the account.
    const base2 = await start(`${tag}-b`, port);
    const login = await fetch(`${base2}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: account.email, password: account.password }) });
    expect(login.status).toBe(200);
    await must('podman stop', podman(['stop', '-t', '40', `${tag}-b`], 60_000));
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', `${tag}-b`])).stdout.trim()).toBe('0');
  }, 5 * 60_000);
});
