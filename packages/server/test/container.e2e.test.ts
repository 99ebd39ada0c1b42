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
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
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
const VERIFY_IMAGE = 'localhost/codeloom-test-verify:latest';
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
  // Stand-ins of earlier days are not used again: untag them (their layers go with the next `podman image prune`).
  const ours = (await podman(['images', '--format', '{{.Repository}}:{{.Tag}}', '--filter', 'reference=localhost/codeloom-test-*'])).stdout.split('\n').filter(Boolean);
  const stale = ours.filter((ref) => /:\d{4}-\d{2}-\d{2}/.test(ref) && !ref.includes(`:${day}`));
  if (stale.length) await podman(['rmi', '--force', ...stale]);
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

/**
 * Stand-ins for the official postgres, redis and nginx images compose.yaml names (which cannot be pulled
 * here): Debian's packages on the stand-in base, behaving as the official images do where compose.yaml
 * relies on it (POSTGRES_USER/PASSWORD/DB create the role and database on first start and PostgreSQL
 * listens on every address; redis-server answers other containers; nginx reads conf.d/default.conf).
 */
let SERVICE_IMAGES = { postgres: '', redis: '', nginx: '' };
const POSTGRES_ENTRYPOINT = `#!/bin/sh
set -e
BIN=$(ls -d /usr/lib/postgresql/*/bin | tail -n1)
PGDATA=/var/lib/postgresql/data
mkdir -p "$PGDATA" /run/postgresql && chown -R postgres:postgres "$PGDATA" /run/postgresql
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ ! -e "$PGDATA/.initialized" ]; then
  find "$PGDATA" -mindepth 1 -delete
  printf '%s\\n' "$POSTGRES_PASSWORD" > /run/postgresql/pw && chown postgres /run/postgresql/pw
  as_postgres "$BIN/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/run/postgresql/pw --auth-host=scram-sha-256 --auth-local=trust >/dev/null
  rm /run/postgresql/pw
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  as_postgres "$BIN/pg_ctl" -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
  as_postgres "$BIN/psql" -q -h /run/postgresql -p 5432 -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \\"$POSTGRES_DB\\""
  as_postgres "$BIN/pg_ctl" -D "$PGDATA" -w stop >/dev/null
  touch "$PGDATA/.initialized"
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$BIN/postgres" -D "$PGDATA"
`;

async function buildServiceImages(): Promise<void> {
  const containerfile = serviceContainerfile();
  // Tagged by day and content: a changed stand-in is rebuilt, an unchanged one reused.
  const version = `${day}-${createHash('sha256').update(containerfile + POSTGRES_ENTRYPOINT).digest('hex').slice(0, 10)}`;
  SERVICE_IMAGES = { postgres: `localhost/codeloom-test-postgres:${version}`, redis: `localhost/codeloom-test-redis:${version}`, nginx: `localhost/codeloom-test-nginx:${version}` };
  const exists = await Promise.all(Object.values(SERVICE_IMAGES).map(async (i) => (await podman(['image', 'exists', i])).status === 0));
  if (exists.every(Boolean)) return;
  const ctx = join(CACHE, 'services-context');
  rmSync(ctx, { recursive: true, force: true });
  mkdirSync(ctx, { recursive: true });
  writeFileSync(join(ctx, 'postgres-entrypoint'), POSTGRES_ENTRYPOINT, { mode: 0o755 });
  writeFileSync(join(ctx, 'Containerfile'), containerfile);
  for (const [target, image] of Object.entries(SERVICE_IMAGES)) {
    await must(`the stand-in ${target} image`, podman(['build', '--network', 'host', '--format', 'docker', '--target', target, '-t', image, ctx], 10 * 60_000));
  }
}

function serviceContainerfile(): string {
  return [
    `FROM ${BASE_IMAGE} AS services`,
    // Debian's own cluster (and its port bookkeeping) is dropped: the entry point makes the one cluster, on 5432.
    'RUN apt-get update && apt-get install -y --no-install-recommends postgresql redis-server nginx && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/*'
      + ' && pg_dropcluster --stop $(ls /etc/postgresql) main',
    'FROM services AS postgres',
    'ENV PGHOST=/run/postgresql PGPORT=5432',
    'COPY postgres-entrypoint /usr/local/bin/postgres-entrypoint',
    'ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]',
    'FROM services AS redis',
    'WORKDIR /data',
    // The official image turns protected mode off when started without a configuration file.
    'ENTRYPOINT ["/bin/sh", "-c", "exec \\"$@\\" --protected-mode no", "redis"]',
    'CMD ["redis-server"]',
    'FROM services AS nginx',
    'CMD ["nginx", "-g", "daemon off;"]',
    '',
  ].join('\n');
}

const haveCompose = spawnSync('sh', ['-c', 'command -v podman-compose'], { stdio: 'ignore' }).status === 0;
let composeDown: (() => Promise<void>) | undefined;

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
    if (composeDown) await composeDown();
    for (const n of ['early', 'a', 'b', 'v', 'plain']) await podman(['rm', '-f', '-v', '-t', '0', `${tag}-${n}`]);
    await podman(['volume', 'rm', '-f', `${tag}-early`]);
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
    expect(config.Entrypoint).toEqual(['/usr/bin/tini', '--']);
    expect(config.Cmd[0]).toBe('node');
    // Production dependencies only: no compiler, test runner or bundler in the final image.
    const ls = await podman(['run', '--rm', ...LIMITS, '--health-interval', 'disable', IMAGE, 'node', '-e',
      "for (const m of ['typescript','vitest','esbuild','better-sqlite3','fastify']) { try { require.resolve(m + '/package.json', { paths: ['/app'] }); console.log(m, 'yes'); } catch { console.log(m, 'no'); } }"]);
    expect(ls.stdout.trim().split('\n')).toEqual(['typescript no', 'vitest no', 'esbuild no', 'better-sqlite3 yes', 'fastify yes']);
  }, 60_000);

  it('serves, passes its health check, registers, generates with the sandbox model, keeps its data on /data, and stops gracefully on SIGTERM', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const port = await freePort();
    // A stop while the server is still starting is prompt too (tini passes SIGTERM on; node as PID 1 ignored it until its handler was installed).
    await must('podman run (stopped at once)', podman(['run', '-d', '--name', `${tag}-early`, ...LIMITS, '--network', 'host', '--read-only', '--tmpfs', '/tmp',
      '--health-interval', 'disable', '-v', `${tag}-early:/data`, '-e', `PORT=${port}`, IMAGE]));
    let t = Date.now();
    await must('podman stop (at once)', podman(['stop', '-t', '40', `${tag}-early`], 60_000));
    timings.stopWhileStarting = Date.now() - t;
    expect(timings.stopWhileStarting).toBeLessThan(10_000);
    expect(['0', '143']).toContain((await podman(['inspect', '--format', '{{.State.ExitCode}}', `${tag}-early`])).stdout.trim());
    await podman(['rm', '-f', '-v', `${tag}-early`]);
    await podman(['volume', 'rm', '-f', `${tag}-early`]);

    t = Date.now();
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
    // HOST=0.0.0.0 in the image: the line says it listens on all interfaces.
    expect(logs.stdout).toMatch(/^Codeloom listening on http:\/\/\S+ \(storage: sqlite, all interfaces \(0\.0\.0\.0:\d+\)\)$/m);
    expect(logs.stdout).toMatch(/^Codeloom stopped$/m);

    // A new container on the same volume has the account.
    const base2 = await start(`${tag}-b`, port);
    const login = await fetch(`${base2}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: account.email, password: account.password }) });
    expect(login.status).toBe(200);
    await must('podman stop', podman(['stop', '-t', '40', `${tag}-b`], 60_000));
    expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', `${tag}-b`])).stdout.trim()).toBe('0');
  }, 5 * 60_000);
  it('compose.yaml: PostgreSQL, Redis, three instances and nginx come up with podman-compose; one origin serves JSON, SSE and WebSocket, and survives two instances stopping', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    if (!haveCompose) {
      console.log('skipping the compose smoke test: podman-compose is not installed (apt-get install -y podman-compose; .ci/run does)');
      ctx.skip('podman-compose is not installed');
    }
    let t = Date.now();
    await buildServiceImages();
    timings.serviceImages = Date.now() - t;
    const dir = join(CACHE, `compose-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    // podman-compose runs plain `podman`: the runtime, cgroup manager and ulimits these machines need come from a containers.conf.
    writeFileSync(join(dir, 'containers.conf'), '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n');
    // Only the images change: the stand-ins, and the image built above for the three instances.
    const instances = ['codeloom-1', 'codeloom-2', 'codeloom-3'];
    writeFileSync(join(dir, 'override.yaml'), [
      'services:',
      `  postgres: { image: "${SERVICE_IMAGES.postgres}" }`,
      `  redis: { image: "${SERVICE_IMAGES.redis}" }`,
      `  proxy: { image: "${SERVICE_IMAGES.nginx}" }`,
      ...instances.map((n) => `  ${n}: { image: "${IMAGE}" }`),
      '',
    ].join('\n'));
    const port = await freePort();
    const project = `cltest${process.pid}`;
    const env = { ...process.env, CONTAINERS_CONF: join(dir, 'containers.conf'), CODELOOM_PORT: String(port), POSTGRES_PASSWORD: `pw${process.pid}x`, CODELOOM_PUBLIC_URL: `http://127.0.0.1:${port}` };
    const compose = (args: string[], timeout = 5 * 60_000) => new Promise<Ran>((resolve) => {
      const started = Date.now();
      const child = spawn('podman-compose', ['-p', project, '-f', join(ROOT, 'compose.yaml'), '-f', join(dir, 'override.yaml'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
      child.on('close', (status) => { clearTimeout(timer); resolve({ status, stdout, stderr, ms: Date.now() - started }); });
    });
    composeDown = async () => {
      // `down -v` removes the named volumes; the instances' anonymous /data volumes and the network are removed here.
      const ids = (await podman(['ps', '-aq', '--filter', `label=io.podman.compose.project=${project}`])).stdout.split('\n').filter(Boolean);
      const mounts = ids.length ? (await podman(['inspect', '--format', '{{range .Mounts}}{{.Name}} {{end}}', ...ids])).stdout.split(/\s+/).filter(Boolean) : [];
      await compose(['down', '-v', '-t', '5'], 3 * 60_000);
      for (const volume of new Set(mounts)) await podman(['volume', 'rm', '-f', volume]);
      await podman(['network', 'rm', '-f', `${project}_default`]);
      rmSync(dir, { recursive: true, force: true });
    };
    t = Date.now();
    await must('podman-compose up', compose(['up', '-d']));
    const base = `http://127.0.0.1:${port}`;
    const until = Date.now() + 180_000;
    let ready = 0;
    while (Date.now() < until && ready < 3) {
      // Three ready answers in a row: nginx spreads them over the instances.
      try { ready = (await fetch(`${base}/readyz`)).status === 200 ? ready + 1 : 0; } catch { ready = 0; }
      if (ready < 3) await new Promise((r) => setTimeout(r, 500));
    }
    if (ready < 3) {
      const ps = await podman(['ps', '-a', '--filter', `label=io.podman.compose.project=${project}`, '--format', '{{.Names}} {{.Status}}']);
      const logs = await Promise.all([...instances, 'postgres', 'redis', 'proxy'].map(async (n) => `--- ${n}\n${tail((await podman(['logs', `${project}_${n}_1`])).stdout + (await podman(['logs', `${project}_${n}_1`])).stderr, 15)}`));
      throw new Error(`the stack did not become ready through the proxy within 180 s:\n${ps.stdout}\n${logs.join('\n')}`);
    }
    // Every instance up, not only the ones nginx happened to ask.
    for (const n of instances) {
      const by = Date.now() + 60_000;
      while (!/^Codeloom listening on /m.test((await podman(['logs', `${project}_${n}_1`])).stdout)) {
        if (Date.now() > by) throw new Error(`${n} did not start within 60 s:\n${tail((await podman(['logs', `${project}_${n}_1`])).stderr, 10)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    timings.composeUp = Date.now() - t;

    const reg = await fetch(`${base}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'compose@example.com', password: 'correct horse battery', name: 'Compose' }) });
    expect(reg.status).toBe(201);
    const { token } = await json(reg);
    const auth = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    // Six calls round-robin over three instances: each accepts a token another one issued (one database, one signing key).
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${base}/api/v1/generate`, { method: 'POST', headers: auth, body: JSON.stringify({ prompt: `CLI that counts words ${i}`, language: 'python' }) });
      expect(res.status).toBe(200);
    }
    // Server-Sent Events through nginx: several token events, then the final one.
    const sse = await fetch(`${base}/api/v1/generate`, { method: 'POST', headers: auth, body: JSON.stringify({ prompt: 'REST API for todos', language: 'typescript', stream: true }) });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = [...(await sse.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events.filter((e) => e === 'token').length).toBeGreaterThan(3);
    expect(events.at(-1)).toBe('complete');
    // The WebSocket channel through nginx (the upgrade passes).
    const frames = await new Promise<string[]>((resolve, reject) => {
      const seen: string[] = [];
      const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v1/stream`, { headers: { authorization: `Bearer ${token}` } });
      const timer = setTimeout(() => { ws.terminate(); reject(new Error(`WebSocket: no complete frame within 30 s (saw ${seen.join(', ')})`)); }, 30_000);
      ws.on('message', (raw) => {
        const frame = JSON.parse(String(raw));
        seen.push(frame.event);
        if (frame.event === 'connected') ws.send(JSON.stringify({ type: 'generate', id: 'r1', prompt: 'bash script that backs up a folder', language: 'bash' }));
        if (frame.event === 'complete' || frame.event === 'error') { clearTimeout(timer); ws.close(); resolve(seen); }
      });
      ws.on('error', (e) => { clearTimeout(timer); reject(e); });
    });
    expect(frames[0]).toBe('connected');
    expect(frames).toContain('token');
    expect(frames.at(-1)).toBe('complete');

    // Two instances stop (SIGTERM, drained): nginx sends everything to the third, which accepts the same token.
    t = Date.now();
    for (const n of ['codeloom-1', 'codeloom-2']) await must(`podman stop ${n}`, podman(['stop', '-t', '40', `${project}_${n}_1`], 60_000));
    timings.composeStopTwo = Date.now() - t;
    for (const n of ['codeloom-1', 'codeloom-2']) expect((await podman(['inspect', '--format', '{{.State.ExitCode}}', `${project}_${n}_1`])).stdout.trim()).toBe('0');
    // Quickly: nginx gives up on a stopped instance's address after proxy_connect_timeout (2 s), not its default 60 s.
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${base}/api/v1/user/profile`, { headers: auth, signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(200);
    }
  }, 15 * 60_000);
  it('the verify target runs verified generation with the documented options (seccomp unconfined, /proc unmasked), and says unavailable without them', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    let t = Date.now();
    await must('podman build --target verify', podman(['build', '--network', 'host', '--format', 'docker', '--target', 'verify',
      '--build-arg', `BASE_IMAGE=${BASE_IMAGE}`, '-t', VERIFY_IMAGE, '.'], BUILD_TIMEOUT));
    timings.verifyBuild = Date.now() - t;
    const verified = async (name: string, options: string[]) => {
      const port = await freePort();
      await must(`podman run ${name}`, podman(['run', '-d', '--name', name, ...LIMITS, '--network', 'host', '--init', '--health-interval', 'disable',
        ...options, '-e', `PORT=${port}`, '-e', 'LOG_LEVEL=warn', VERIFY_IMAGE]));
      const base = `http://127.0.0.1:${port}`;
      await waitReady(`${base}/readyz`, name);
      const reg = await fetch(`${base}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'verify@example.com', password: 'correct horse battery', name: 'Verify' }) });
      const { token } = await json(reg);
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
      const status = await json(await fetch(`${base}/api/v1/verification`, { headers }));
      const gen = await json(await fetch(`${base}/api/v1/generate`, { method: 'POST', headers,
        body: JSON.stringify({ prompt: 'REST API for todos', language: 'typescript', context: { includeTests: true }, verify: true }) }));
      await podman(['rm', '-f', '-v', '-t', '0', name]);
      return { status, verification: gen.verification };
    };
    t = Date.now();
    const on = await verified(`${tag}-v`, ['--security-opt', 'seccomp=unconfined', '--security-opt', 'unmask=ALL']);
    timings.verifyRun = Date.now() - t;
    expect(on.status.available, JSON.stringify(on.status)).toBe(true);
    const supported = on.status.languages.filter((l: any) => l.supported).map((l: any) => l.id);
    expect(supported).toEqual(expect.arrayContaining(['typescript', 'javascript', 'python', 'c', 'cpp', 'bash']));
    expect(on.verification.status, JSON.stringify(on.verification)).toBe('passed');
    expect(on.verification.tests.passed).toBeGreaterThan(0);
    // Without the options nothing runs: the sandbox cannot start, and says why.
    const off = await verified(`${tag}-plain`, []);
    expect(off.status.available).toBe(false);
    expect(off.verification.status).toBe('unavailable');
    expect(off.verification.reason).toMatch(/bwrap/);
  }, BUILD_TIMEOUT + 5 * 60_000);
});
