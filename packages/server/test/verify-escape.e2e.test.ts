/**
 * The escape suite: generated code that attacks the verification sandbox (CONTRACT §12.1), through the real
 * interface. The OpenAI fake upstream answers with an attack as fenced files (a deliberately wrong `calc.py`,
 * the attack as `test_attack.py`, the shared helpers of fixtures/escape/escape_kit.py), and the server verifies
 * it under small limits. The real test always fails, so only a forged report could make the verdict `passed`.
 *
 * For every attack: the answer is a 200 (or a clean 4xx), never a 5xx; the verdict is never `passed`; the
 * server still answers /healthz; nothing landed on the host (its data directory, /tmp, /dev/shm, processes).
 * Then each attack's own assertions, on what the attack printed (`ESCAPE key=value` lines) and on what the
 * test measures FROM OUTSIDE while it runs: the host's MemAvailable and free disk every 50 ms, and the
 * processes carrying the attack's marker (argv[0] or script path) in the host's /proc (every 10 ms).
 * ESCAPE_VERBOSE=1 prints each attack's findings and measurements, passing or not.
 *
 *  1. report channel flood (pidfd_getfd / /proc/<driver>/fd/1, 800 MB without a newline) — against a server
 *     started as its own process from the sources, so a crash is seen as a crash, not as the test runner's
 *  2. forged verdict (JSON lines through the stolen channel, then the driver killed)
 *  3. shared memory (MAP_SHARED anonymous, /dev/shm, memfd) under a 64 MiB memory limit
 *  4. disk (/, /dev, /dev/shm, /tmp, the work directory) under a 16 MB disk limit
 *  5. a process limit the code cannot pause (SIGSTOP to everyone in sight, then 63 sleepers under a limit of 8)
 *  6. stray file descriptors  7. nested user namespaces
 *  8. network, host files and environment, fork bomb, output floods, endless loop, daemons
 *  9. malformed file trees (through the API, and straight into VerificationService)
 * 10. another account's heavy verifications do not slow this one
 *
 * Everything here runs one test at a time (the host measurements must not see another test's sandbox).
 * Skipped, saying so, where bubblewrap cannot run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load-config.js';
import { VerificationService } from '../src/modules/verify/verification-service.js';
import { startOpenAIFake } from './fakes/openai-fake.js';
import type { FakeVendor } from './fakes/fake-vendor.js';
import { registerUser, request, type JsonResponse } from './helpers/http.js';
import { nextIp, startTestServer, type TestServer } from './helpers/test-server.js';

const probe = await new VerificationService(loadConfig({})).status();
if (!probe.available) console.log(`skipping the sandbox escape tests: ${probe.reason}`);

const FIXTURES = fileURLToPath(new URL('./fixtures/escape/', import.meta.url));
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const MAX_PROCESSES = 8;
const DISK_MB = 16;
const OUTPUT_TAIL = 8192; // CODELOOM_VERIFY_OUTPUT_TAIL's default
const LIMITS: Record<string, string> = {
  CODELOOM_VERIFY_MEMORY_MB: '64', CODELOOM_VERIFY_DISK_MB: String(DISK_MB), CODELOOM_VERIFY_MAX_PROCESSES: String(MAX_PROCESSES),
  CODELOOM_VERIFY_TIMEOUT: '20', CODELOOM_VERIFY_CPU_SECONDS: '10', CODELOOM_VERIFY_OUTPUT_LIMIT: '1000000',
  // The defaults, spelled out: the fairness test relies on them.
  CODELOOM_VERIFY_CONCURRENCY: '2', CODELOOM_VERIFY_PER_ACCOUNT: '1', CODELOOM_VERIFY_QUEUE: '4',
};
/** The host's MemAvailable (and free disk) may drop by less than this while an attack runs (1 GiB is attempted). */
const HOST_DROP_MB = 400;
/** Processes of an attack seen at once from outside: the limit plus a little slack for the moment of a fork. */
const PROCESS_SLACK = 2;

// The server's own environment holds a secret: a sandbox that can read it (/proc/1/environ) leaks it.
const CANARY = `canary-${randomBytes(8).toString('hex')}`;
process.env.CODELOOM_ESCAPE_CANARY = CANARY;

// ---- measuring the host from outside -------------------------------------------------------------------------

const memAvailableMb = () => Number(/^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) / 1024;
const diskFreeMb = (path: string) => { const s = statfsSync(path); return (s.bavail * s.bsize) / 2 ** 20; };

/**
 * Host processes whose command line carries the marker: the attack's own (zombies have none and do not count;
 * nor does a bwrap of the sandbox's whose arguments name the attack's script).
 */
function markedPids(marker: string): number[] {
  const found: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'latin1').includes(marker) && readFileSync(`/proc/${d}/comm`, 'latin1').trim() !== 'bwrap') found.push(Number(d));
    } catch { /* gone */ }
  }
  return found;
}

interface Watched { memDropMb: number; diskDropMb: number; maxMarked: number }

/**
 * Samples the host until stopped: the largest drop of MemAvailable and free disk, the most marked processes —
 * every 50 ms, every 10 ms while counting processes (a process limit enforced late shows only briefly). It starts
 * once MemAvailable holds still: the previous sandbox's memory is freed asynchronously, and memory coming back
 * while an attack takes some would hide the attack.
 */
async function watchHost(marker?: string) {
  let last = memAvailableMb();
  for (const end = Date.now() + 5000; Date.now() < end;) {
    await sleep(250);
    const now = memAvailableMb();
    if (Math.abs(now - last) < 16) break;
    last = now;
  }
  const disks = [...new Set(['/', tmpdir()])];
  const mem0 = memAvailableMb();
  const disk0 = disks.map(diskFreeMb);
  let memMin = mem0;
  let diskDrop = 0;
  let maxMarked = 0;
  const sample = () => {
    memMin = Math.min(memMin, memAvailableMb());
    disks.forEach((d, i) => { diskDrop = Math.max(diskDrop, disk0[i]! - diskFreeMb(d)); });
    if (marker) maxMarked = Math.max(maxMarked, markedPids(marker).length);
  };
  const timer = setInterval(sample, marker ? 10 : 50);
  return {
    stop(): Watched {
      clearInterval(timer);
      sample();
      return { memDropMb: Math.round(mem0 - memMin), diskDropMb: Math.round(diskDrop), maxMarked };
    },
  };
}

/** ESCAPE_VERBOSE=1 prints what each attack found and what the host saw, pass or fail. */
const note = (label: string, text: string) => { if (process.env.ESCAPE_VERBOSE) console.log(`--- ${label}\n${text}`); };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor(check: () => boolean, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
}

// ---- the attacks' projects ------------------------------------------------------------------------------------

interface Attack { nonce: string; marker: string }
const newAttack = (): Attack => { const nonce = randomBytes(5).toString('hex'); return { nonce, marker: `escape-marker-proc-${nonce}` }; };

/** The honest test of calc.py: it fails. */
const FAILING_TEST = 'import unittest\n\nfrom calc import add\n\n\nclass Add(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n';

const fences = (language: string, files: Record<string, string>) =>
  Object.entries(files).map(([path, content]) => `\`\`\`${language} ${path}\n${content.endsWith('\n') ? content : `${content}\n`}\`\`\`\n`).join('\n');

/** `ESCAPE key=value` lines of the attack (the last value of a key wins). */
function findings(output: string): Record<string, string> {
  const out: Record<string, string> = {};
  // Not anchored at the line's start: `unittest -v` prints "test_add (…) ... " before the test's first line.
  for (const m of output.matchAll(/\bESCAPE (\w+)=(.*)$/gm)) out[m[1]!] = m[2]!;
  return out;
}

interface Verdict {
  res: JsonResponse;
  /** 0 when the request got no HTTP answer at all (the server died, or the client gave up). */
  status: number;
  v: any;
  output: string;
  found: Record<string, string>;
  ms: number;
  digest: string;
}

function digest(status: number, v: any, extra = ''): string {
  const checks = (v?.checks ?? []).map((c: any) => ({ name: c.name, exit_code: c.exit_code, killed: c.killed, skipped: c.skipped, output: String(c.output ?? '').slice(-1500) }));
  return `${extra}\nHTTP ${status}; verification: ${JSON.stringify({ status: v?.status, reason: v?.reason, tests: v?.tests, checks }, null, 1)}`.slice(0, 8000);
}

// ---- the suite ------------------------------------------------------------------------------------------------

describe.skipIf(!probe.available).sequential('the verification sandbox under attack', () => {
  let fake: FakeVendor;
  let t: TestServer;
  let dataDir: string;
  let hostDir: string;
  let listener: Server;
  let listenerPort = 0;
  let listenerConnections = 0;
  const hostRootPrivate: string[] = [];

  beforeAll(async () => {
    fake = await startOpenAIFake();
    dataDir = mkdtempSync(join(tmpdir(), 'codeloom-data-'));
    writeFileSync(join(dataDir, 'server-secret.txt'), 'do not read');
    hostDir = mkdtempSync(join(tmpdir(), 'codeloom-escape-host-'));
    writeFileSync(join(hostDir, 'secret.txt'), `host secret ${CANARY}`);
    listener = createServer((s) => { listenerConnections++; s.end('secret'); });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerPort = (listener.address() as { port: number }).port;
    // What the host keeps in /root that is no toolchain (those directories are mounted read-only on purpose).
    try { for (const e of readdirSync('/root')) if (e === '.ssh' || statSync(join('/root', e)).isFile()) hostRootPrivate.push(e); } catch { /* no /root */ }
    t = await startTestServer({ env: { ...upstreamEnv(), CODELOOM_DATA_DIR: dataDir, ...LIMITS } });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
    for (const dir of [dataDir, hostDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const upstreamEnv = () => ({ OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-test', CODELOOM_OPENAI_MODELS: 'gpt-test', CODELOOM_DEFAULT_MODEL: 'sandbox' });
  const fresh = async (base = t.url) => (await registerUser(base, { ip: nextIp() })).token;

  const configPy = (a: Attack, extra: Record<string, unknown> = {}) => [
    `NONCE = ${JSON.stringify(a.nonce)}`,
    `MARKER = ${JSON.stringify(a.marker)}`,
    `DATA_DIR = ${JSON.stringify(dataDir)}`,
    `DATA_SECRET = ${JSON.stringify(join(dataDir, 'server-secret.txt'))}`,
    `HOST_TMP = ${JSON.stringify(hostDir)}`,
    `HOST_SECRET = ${JSON.stringify(join(hostDir, 'secret.txt'))}`,
    `PORTS = {"server": ${new URL(t.url).port}, "listener": ${listenerPort}}`,
    'FLOOD_LINES = False',
    ...Object.entries(extra).map(([k, v]) => `${k} = ${typeof v === 'boolean' ? (v ? 'True' : 'False') : JSON.stringify(v)}`),
  ].join('\n');

  /** The model's answer: the wrong calc.py, the kit, this attack's settings and the attack as the test file. */
  const pythonAttack = (file: string, a: Attack, extra: Record<string, unknown> = {}) => fences('python', {
    'calc.py': fixture('calc.py'), 'escape_kit.py': fixture('escape_kit.py'), 'escape_config.py': configPy(a, extra), 'test_attack.py': fixture(file),
  });

  /** POST /generate with verify on a fresh account, the fake answering `reply`; never throws on a dead server. */
  async function verifyAnswer(reply: string, opts: { base?: string; language?: string; verify?: unknown; token?: string } = {}): Promise<Verdict> {
    const base = opts.base ?? t.url;
    fake.reset();
    fake.script({ reply });
    const token = opts.token ?? await fresh(base);
    const started = Date.now();
    let res: JsonResponse;
    try {
      res = await request(`${base}/api/v1/generate`, { method: 'POST', token, body: { prompt: 'escape', language: opts.language ?? 'python', model: 'gpt-test', verify: opts.verify ?? true } });
    } catch (error) {
      res = { status: 0, headers: new Headers(), body: undefined, text: String(error) };
    }
    const v = res.body?.verification;
    const output = (v?.checks ?? []).map((c: any) => String(c.output ?? '')).join('\n');
    return { res, status: res.status, v, output, found: findings(output), ms: Date.now() - started, digest: digest(res.status, v, res.status === 200 ? '' : res.text.slice(0, 1000)) };
  }

  /** What holds for every attack: a clean answer, no `passed`, a live server, nothing left on the host. */
  async function expectContained(r: Verdict, a: Attack, base = t.url) {
    expect(r.status, `no HTTP answer, or a 5xx: ${r.digest}`).toBeGreaterThanOrEqual(200);
    expect(r.status, r.digest).toBeLessThan(500);
    if (r.status === 200) {
      expect(r.v, `a 200 without a verdict: ${r.digest}`).toBeDefined();
      expect(r.v.status, r.digest).not.toBe('passed');
    }
    const health = await request(`${base}/healthz`).catch((e: unknown) => ({ status: 0, text: String(e) }));
    expect(health.status, `the server no longer answers /healthz: ${health.text}`).toBe(200);
    // Nothing the sandbox wrote is on the host.
    expect(readdirSync(dataDir)).toEqual(['server-secret.txt']);
    expect(readFileSync(join(dataDir, 'server-secret.txt'), 'utf8')).toBe('do not read');
    expect(readdirSync(hostDir)).toEqual(['secret.txt']);
    for (const dir of [tmpdir(), '/dev/shm', '/var/tmp', process.cwd()]) {
      if (!existsSync(dir)) continue;
      expect(readdirSync(dir).filter((e) => e.includes(a.nonce)), `files of the attack in the host's ${dir}`).toEqual([]);
    }
    // And nothing it started outlives the verdict.
    const gone = await waitFor(() => markedPids(a.marker).length === 0, 3000);
    expect(gone, `processes of the attack still run on the host after the verdict: ${markedPids(a.marker).join(', ')}`).toBe(true);
  }

  /**
   * The attack really ran: it said so, or its beacon (a sleeper marked with its argv[0], started first thing) was
   * seen from outside — a sandbox stopped whole (memory, time) may bring none of the check's output back.
   */
  const expectRan = (r: Verdict, host: Watched, why: string) =>
    expect(r.found.started === '1' || host.maxMarked > 0, `the attack never ran: ${why}`).toBe(true);

  /** The check that ran the tests (its failure is the honest verdict). */
  const testCheck = (r: Verdict) => (r.v?.checks ?? []).find((c: any) => c.name === 'test') ?? (r.v?.checks ?? []).at(-1);

  // ---- 1, 2: the report channel ------------------------------------------------------------------------------

  describe('the channel the sandbox reports on', () => {
    it('cannot be flooded: 800 MB without a newline through the driver\'s stolen stdout leaves the server up and the verdict not passed', async () => {
      const own = mkdtempSync(join(tmpdir(), 'codeloom-data-'));
      const server = await spawnServerFromSource({ ...upstreamEnv(), CODELOOM_DATA_DIR: own, ...LIMITS });
      try {
        const a = newAttack();
        const r = await verifyAnswer(pythonAttack('report_flood.py', a), { base: server.url });
        if (r.status === 0) await waitFor(() => server.child.exitCode !== null || server.child.signalCode !== null, 3000);
        const why = `${r.digest}\nchannels: ${r.found.channels ?? '?'}; server exit: ${String(server.child.exitCode ?? server.child.signalCode)}\nserver output: ${server.output().slice(-2000)}`;
        note(String(expect.getState().currentTestName), why);
        expect(server.child.exitCode ?? server.child.signalCode, `the server process died: ${why}`).toBeNull();
        await expectContained(r, a, server.url);
        expect(r.ms, why).toBeLessThan(45_000);
      } finally {
        await server.stop();
        rmSync(own, { recursive: true, force: true });
      }
    }, 60_000);

    it('cannot be forged: a report claiming every check passed, then the driver killed, is never `passed`', async () => {
      const a = newAttack();
      const r = await verifyAnswer(pythonAttack('forge_verdict.py', a));
      await expectContained(r, a);
      const why = `${r.digest}\nchannels: ${r.found.channels}; forged: ${r.found.forged}; killed: ${r.found.killed}`;
      note(String(expect.getState().currentTestName), why);
      // The real, failing result of the test check stands; no forged `end` became a check's result.
      expect(testCheck(r)?.exit_code, why).not.toBe(0);
      expect(r.v.checks.some((c: any) => c.exit_code === 0 && c.output === '40 passed'), why).toBe(false);
    }, 60_000);
  });

  // ---- 3, 4, 5: limits enforced from outside -------------------------------------------------------------------

  describe('limits on the whole sandbox, enforced from outside it', () => {
    for (const [label, file] of [['MAP_SHARED anonymous memory', 'shm_mmap.py'], ['/dev/shm', 'shm_devshm.py'], ['memfd', 'shm_memfd.py']] as const) {
      it(`memory: 1 GiB through ${label} under a 64 MiB limit does not reach the host`, async () => {
        const a = newAttack();
        const watch = await watchHost(a.marker);
        const r = await verifyAnswer(pythonAttack(file, a));
        const host = watch.stop();
        const why = `${r.digest}\nhost: ${JSON.stringify(host)}; the attack touched ${r.found.touched_mb ?? 0} MB (${r.found.error ?? 'no error'})`;
        note(String(expect.getState().currentTestName), why);
        await expectContained(r, a);
        expectRan(r, host, why);
        expect(host.memDropMb, `the host's MemAvailable dropped by ${host.memDropMb} MB: ${why}`).toBeLessThan(HOST_DROP_MB);
        expect(Number(r.found.touched_mb ?? 0), why).toBeLessThan(HOST_DROP_MB);
      }, 60_000);
    }

    it('disk: 600 MB to /, /dev, /dev/shm, /tmp and the work directory under a 16 MB limit fails early everywhere', async () => {
      const a = newAttack();
      const watch = await watchHost(a.marker);
      const r = await verifyAnswer(pythonAttack('disk.py', a));
      const host = watch.stop();
      const labels = ['root', 'dev', 'devshm', 'tmp', 'work'];
      const wrote = Object.fromEntries(labels.map((l) => [l, Number(r.found[`wrote_${l}_mb`] ?? NaN)]));
      const why = `${r.digest}\nhost: ${JSON.stringify(host)}; written (MB): ${JSON.stringify(wrote)}; errors: ${labels.map((l) => `${l}=${r.found[`error_${l}`]}`).join(' ')}`;
      note(String(expect.getState().currentTestName), why);
      await expectContained(r, a);
      for (const l of labels) {
        expect(wrote[l], `the attack did not report ${l}: ${why}`).not.toBeNaN();
        expect(wrote[l], `${l}: ${why}`).toBeLessThanOrEqual(DISK_MB);
        expect(r.found[`error_${l}`], `${l}: the write never failed: ${why}`).not.toBe('none');
      }
      // The work directory and /tmp share one disk; /dev/shm is small; / and /dev take nothing.
      expect(Object.values(wrote).reduce((x, y) => x + y, 0), why).toBeLessThanOrEqual(2 * DISK_MB + 8);
      expect(host.memDropMb, why).toBeLessThan(HOST_DROP_MB);
      expect(host.diskDropMb, why).toBeLessThan(HOST_DROP_MB);
    }, 60_000);

    it('processes: with everything in sight SIGSTOPped, 63 sleepers under a limit of 8 never exist at once, and none outlives the verdict', async () => {
      const a = newAttack();
      const watch = await watchHost(a.marker);
      const r = await verifyAnswer(pythonAttack('process_limit.py', a), { verify: { timeout_s: 10 } });
      const host = watch.stop();
      const why = `${r.digest}\nhost: ${JSON.stringify(host)}; stopped: ${r.found.stopped}; forked: ${r.found.forked} (${r.found.fork_errors})`;
      note(String(expect.getState().currentTestName), why);
      expectRan(r, host, why);
      expect(host.maxMarked, `${host.maxMarked} of the attack's processes ran at once: ${why}`).toBeLessThanOrEqual(MAX_PROCESSES + PROCESS_SLACK);
      await expectContained(r, a);
    }, 60_000);

    it('processes: a fork bomb never has more than the limit at once, and is gone after the verdict', async () => {
      const a = newAttack();
      const watch = await watchHost(a.marker);
      // The marker is in the script's path, so every shell of the bomb carries it in its command line.
      const r = await verifyAnswer(fences('bash', { [`tests/${a.marker}_test.sh`]: fixture('fork_bomb.sh') }), { language: 'bash', verify: { timeout_s: 15 } });
      const host = watch.stop();
      const why = `${r.digest}\nhost: ${JSON.stringify(host)}`;
      note(String(expect.getState().currentTestName), why);
      expectRan(r, host, why);
      expect(host.maxMarked, `${host.maxMarked} of the bomb's processes ran at once: ${why}`).toBeLessThanOrEqual(MAX_PROCESSES + PROCESS_SLACK);
      await expectContained(r, a);
    }, 60_000);
  });

  // ---- 6, 7, 8: isolation ---------------------------------------------------------------------------------------

  describe('what the code under test can reach', () => {
    it('inherits no file descriptor but 0, 1 and 2', async () => {
      const a = newAttack();
      const r = await verifyAnswer(pythonAttack('stray_fds.py', a));
      await expectContained(r, a);
      const strays = Object.entries(r.found).filter(([k]) => /^fd\d+$/.test(k)).map(([k, v]) => `${k} -> ${v}`).join('; ');
      expect(r.found.fds, `${strays}\n${r.digest}`).toBe('0,1,2');
    }, 60_000);

    it('cannot make a nested user namespace (unshare -U, unshare(CLONE_NEWUSER), bwrap)', async () => {
      const a = newAttack();
      const r = await verifyAnswer(pythonAttack('user_namespaces.py', a));
      await expectContained(r, a);
      const why = `${JSON.stringify(r.found)}\n${r.digest}`;
      note(String(expect.getState().currentTestName), why);
      expect(r.found.started, `the attack did not run: ${why}`).toBe('1');
      expect(r.found.unshare_cmd, why).not.toBe('0');
      expect(r.found.bwrap, why).not.toBe('0');
      expect(r.found.unshare_syscall, why).toBe('refused');
    }, 60_000);

    it('has no network: not the server\'s port, not the host\'s loopback, not a TEST-NET address, no DNS', async () => {
      const a = newAttack();
      const before = listenerConnections;
      const r = await verifyAnswer(pythonAttack('network.py', a));
      await expectContained(r, a);
      const why = `${JSON.stringify(r.found)}\n${r.digest}`;
      note(String(expect.getState().currentTestName), why);
      expect(r.found.started, `the attack did not run: ${why}`).toBe('1');
      for (const key of ['connect_server', 'connect_listener', 'connect_testnet', 'dns']) {
        expect(r.found[key], `${key}: ${why}`).toBeDefined();
        expect(r.found[key], `${key}: ${why}`).not.toBe('ok');
      }
      expect(r.found.ifaces, why).toBe('lo');
      expect(listenerConnections - before).toBe(0);
    }, 60_000);

    it('cannot read the server\'s files or environment (data directory, /etc/shadow, /root, /proc/1/environ, the parent\'s environ)', async () => {
      const a = newAttack();
      const r = await verifyAnswer(pythonAttack('host_files.py', a));
      await expectContained(r, a);
      const why = `${JSON.stringify(r.found, null, 1).slice(0, 4000)}\n${r.digest}`;
      note(String(expect.getState().currentTestName), why);
      expect(r.found.started, `the attack did not run: ${why}`).toBe('1');
      for (const key of ['read_data_secret', 'read_host_secret', 'read_shadow']) expect(r.found[key], `${key}: ${why}`).not.toMatch(/bytes/);
      expect(r.output, `the server's secrets reached the sandbox: ${why}`).not.toContain('do not read');
      expect(r.output, `the server's environment (CODELOOM_ESCAPE_CANARY) reached the sandbox: ${why}`).not.toContain(CANARY);
      const rootEntries = (r.found.root_entries ?? '').split(',');
      expect(hostRootPrivate.filter((e) => rootEntries.includes(e)), `the host's /root is visible: ${why}`).toEqual([]);
    }, 60_000);

    for (const lines of [false, true]) {
      it(`an output flood ${lines ? 'in lines' : 'without a newline'} is stopped at the output limit and only the tail is kept`, async () => {
        const a = newAttack();
        const r = await verifyAnswer(pythonAttack('output_flood.py', a, { FLOOD_LINES: lines }));
        await expectContained(r, a);
        const test = testCheck(r);
        const why = r.digest;
        note(String(expect.getState().currentTestName), why);
        expect(test?.killed, why).toMatch(/output/i);
        expect(String(test?.output ?? '').length, why).toBeLessThanOrEqual(OUTPUT_TAIL + 200);
        expect(r.ms, why).toBeLessThan(30_000);
      }, 60_000);
    }

    it('an endless loop is stopped by the wall time', async () => {
      const a = newAttack();
      const r = await verifyAnswer(pythonAttack('endless_loop.py', a), { verify: { timeout_s: 6 } });
      await expectContained(r, a);
      expect(testCheck(r)?.killed, r.digest).toBeTruthy();
      expect(r.ms, r.digest).toBeLessThan(6_000 + 15_000);
    }, 60_000);

    it('daemons (setsid, double fork, signals ignored) do not outlive the verification', async () => {
      const a = newAttack();
      const watch = await watchHost(a.marker);
      const r = await verifyAnswer(pythonAttack('daemonize.py', a));
      const host = watch.stop();
      expect(r.found.daemonized, `the attack did not run: ${r.digest}`).toBe('3');
      expect(host.maxMarked, `the daemons were never seen from outside: ${r.digest}`).toBeGreaterThan(0);
      await expectContained(r, a);
    }, 60_000);
  });

  // ---- 9: malformed file trees ---------------------------------------------------------------------------------

  describe('malformed file trees', () => {
    /** A clean verdict: `error` or `failed`, with a short reason and no stack trace. */
    const expectCleanVerdict = (v: any, why: string) => {
      expect(['error', 'failed'], why).toContain(v?.status);
      const reason = String(v?.reason ?? '');
      expect(reason, why).not.toMatch(/\n\s+at |\bat (Object\.|Module\.|node:|file:\/\/)|\(node:internal|\.js:\d+:\d+/);
      expect(reason.length, why).toBeLessThanOrEqual(500);
    };

    const trees: Array<[string, Record<string, string>]> = [
      ['a file and a directory of the same name (file first)', { 'x.js': 'module.exports = 1;\n', 'x.js/y.js': 'console.log(1);\n' }],
      ['a file and a directory of the same name (directory first)', { 'x.js/y.js': 'console.log(1);\n', 'x.js': 'module.exports = 1;\n' }],
      ['a file name longer than the file system allows', { [`${'a'.repeat(260)}.js`]: 'console.log(1);\n', 'main.js': 'console.log(1);\n' }],
    ];
    for (const [label, files] of trees) {
      it(`${label}: a clean verdict, the server up`, async () => {
        const a = newAttack();
        const r = await verifyAnswer(fences('javascript', files), { language: 'javascript' });
        await expectContained(r, a);
        if (r.status === 200) expectCleanVerdict(r.v, r.digest);
      }, 60_000);
    }

    it('paths with `..` and absolute paths in the answer never leave the project', async () => {
      const a = newAttack();
      const evil = `open(${JSON.stringify(join(tmpdir(), `pwned-${a.nonce}`))}, "w").write("x")\n`;
      const reply = [
        fences('python', { [`../escape-${a.nonce}.py`]: evil, [join(tmpdir(), `escape-${a.nonce}-abs.py`)]: evil, [`src/../../escape-${a.nonce}-dots.py`]: evil }),
        fences('python', { 'calc.py': fixture('calc.py'), 'test_calc.py': FAILING_TEST }),
      ].join('\n');
      const r = await verifyAnswer(reply);
      await expectContained(r, a);
      if (r.status === 200) expectCleanVerdict(r.v, r.digest);
      for (const f of r.res.body?.files ?? []) {
        expect(f.path, r.digest).not.toMatch(/^\/|(^|\/)\.\.(\/|$)/);
      }
      expect(existsSync(join(process.cwd(), '..', `escape-${a.nonce}.py`))).toBe(false);
      expect(existsSync(join(dirname(process.cwd()), '..', `escape-${a.nonce}-dots.py`))).toBe(false);
      expect(existsSync(join(tmpdir(), `escape-${a.nonce}-abs.py`))).toBe(false);
    }, 60_000);

    it('straight into VerificationService (no parser in front): `..`, absolute, file-and-directory paths give a clean verdict and touch nothing on the host', async () => {
      const a = newAttack();
      const service = new VerificationService(loadConfig({ ...LIMITS }));
      const evil = 'x = 1\n';
      const files = [
        { path: `../escape-${a.nonce}.py`, content: evil },
        { path: join(tmpdir(), `escape-${a.nonce}-abs.py`), content: evil },
        { path: `a/../../escape-${a.nonce}-dots.py`, content: evil },
        { path: 'x.py', content: evil },
        { path: 'x.py/y.py', content: evil },
        { path: 'calc.py', content: fixture('calc.py') },
        { path: 'test_calc.py', content: FAILING_TEST },
      ];
      const v = await service.verify('python', files, { attempt: 1 });
      const why = digest(200, v);
      note(String(expect.getState().currentTestName), why);
      expect(v.status, why).not.toBe('passed');
      expectCleanVerdict(v, why);
      for (const p of [join(process.cwd(), '..', `escape-${a.nonce}.py`), join(tmpdir(), `escape-${a.nonce}-abs.py`), join(dirname(process.cwd()), `escape-${a.nonce}-dots.py`)]) {
        expect(existsSync(p), p).toBe(false);
      }
      expect(readdirSync(tmpdir()).filter((e) => e.includes(a.nonce))).toEqual([]);
    }, 60_000);
  });

  // ---- 10: other accounts --------------------------------------------------------------------------------------

  describe('other accounts', () => {
    it('are not slowed: while account A\'s verifications burn CPU for their whole wall time, B\'s generation and B\'s verification answer promptly', async () => {
      const a = newAttack();
      const [tokenA, tokenB] = [await fresh(), await fresh()];
      fake.reset();
      fake.script({ reply: pythonAttack('cpu_relay.py', a) });
      // A: three verifications at once, each holding its sandbox for the full wall time (20 s).
      const aborts = [0, 1, 2].map(() => new AbortController());
      const aCalls = aborts.map((c) => fetch(`${t.url}/api/v1/generate`, {
        method: 'POST', signal: c.signal, headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'escape', language: 'python', model: 'gpt-test', verify: true }),
      }).then((res) => res.status, () => 'aborted'));
      let maxA = 0;
      const counter = setInterval(() => { maxA = Math.max(maxA, markedPids(a.marker).length); }, 50);
      try {
        expect(await waitFor(() => markedPids(a.marker).length > 0, 20_000), 'account A\'s verification never started').toBe(true);
        await sleep(1500);
        // B: a plain generation (the sandbox model, no verification) …
        let started = Date.now();
        const plain = await request(`${t.url}/api/v1/generate`, { method: 'POST', token: tokenB, body: { prompt: 'library for managing strings', language: 'python' } });
        const plainMs = Date.now() - started;
        // … and a verification of a project that passes (bash: the smallest toolchain under a 64 MiB limit).
        started = Date.now();
        const bv = await fetch(`${t.url}/api/v1/generate`, {
          method: 'POST', signal: AbortSignal.timeout(15_000), headers: { authorization: `Bearer ${tokenB}`, 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: 'script to track expenses', language: 'bash', context: { includeTests: true }, verify: true }),
        }).then(async (res) => ({ status: res.status, body: await res.json() as any }), (e: unknown) => ({ status: 0, body: { error: String(e) } }));
        const verifyMs = Date.now() - started;
        const why = `B's generation: ${plainMs} ms (HTTP ${plain.status}); B's verification: ${verifyMs} ms, ${digest(bv.status, bv.body?.verification, bv.status === 200 ? '' : JSON.stringify(bv.body).slice(0, 500))}; A's sandboxes at once: ${maxA}`;
        note(String(expect.getState().currentTestName), why);
        expect(plain.status, why).toBe(200);
        expect(plainMs, why).toBeLessThan(5_000);
        expect(bv.status, why).toBe(200);
        expect(bv.body.verification?.status, why).toBe('passed');
        expect(verifyMs, why).toBeLessThan(12_000);
        // One organization's verifications run one at a time (CODELOOM_VERIFY_PER_ACCOUNT, default 1).
        expect(maxA, why).toBeLessThanOrEqual(1);
      } finally {
        clearInterval(counter);
        for (const c of aborts) c.abort();
        await Promise.all(aCalls);
      }
      // A's callers are gone: their sandboxes are killed at once, and none is started later.
      const gone = await waitFor(() => markedPids(a.marker).length === 0, 5_000);
      expect(gone, `account A's sandboxes still run after its callers left: ${markedPids(a.marker).join(', ')}`).toBe(true);
      await sleep(2_000);
      expect(markedPids(a.marker), 'a sandbox of account A was started after its caller left').toEqual([]);
      expect((await request(`${t.url}/healthz`)).status).toBe(200);
    }, 60_000);
  });
});

// ---- a server of its own -------------------------------------------------------------------------------------

interface OwnServer { url: string; child: ChildProcess; output: () => string; stop(): Promise<void> }

/** The server from its sources (tsx, fixtures/escape/serve-from-source.mjs) as a process of its own: an attack that kills it is seen as such. */
async function spawnServerFromSource(env: Record<string, string>): Promise<OwnServer> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !/^(NODE_OPTIONS|VITEST|TEST_|TINYPOOL)/.test(k))) as Record<string, string>;
  const child = spawn(process.execPath, [join(FIXTURES, 'serve-from-source.mjs')], {
    env: { ...inherited, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', CODELOOM_ARGON2_MEMORY_KIB: '1024', CODELOOM_TRUST_PROXY: 'true', CODELOOM_ISSUER: 'http://codeloom.test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => { out = (out + String(d)).slice(-20_000); });
  child.stderr!.on('data', (d) => { out = (out + String(d)).slice(-20_000); });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${out}`)), 40_000);
    const onData = () => {
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m) { clearTimeout(timer); child.stdout!.off('data', onData); resolve(m[1]!); }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the server exited with ${String(code)}:\n${out}`)); });
  });
  return {
    url,
    child,
    output: () => out,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => { clearTimeout(force); resolve(); });
      child.kill('SIGTERM');
    }),
  };
}
