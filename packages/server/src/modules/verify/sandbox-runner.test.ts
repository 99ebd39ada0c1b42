/**
 * The isolated runner for real (bubblewrap on this machine): generated code that reaches for the network,
 * writes or reads outside its work directory, forks without bound, loops, allocates or prints without bound
 * is stopped and reported as a failed check, and the host is untouched. Without bwrap: `unavailable`, and
 * nothing runs. (Skipped, saying so, where bwrap cannot run.)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxRunner, SandboxUnavailableError, type SandboxLimits } from './sandbox-runner.js';
import { detectToolchains } from './toolchains.js';

const tools = await detectToolchains();
const limits: SandboxLimits = { timeoutMs: 8000, cpuSeconds: 2, memoryMb: 256, maxProcesses: 32, outputLimit: 200_000, outputTail: 2000, diskMb: 32 };
const runner = new SandboxRunner('bwrap', tools, limits);
const available = (await runner.selfTest()).available;
if (!available) console.log(`skipping the sandbox isolation tests: ${JSON.stringify(await runner.selfTest())}`);

describe('without bubblewrap', () => {
  it('reports unavailable and runs nothing', async () => {
    const missing = new SandboxRunner('/nonexistent/bwrap', tools, limits);
    const status = await missing.selfTest();
    expect(status.available).toBe(false);
    const marker = join(tmpdir(), `codeloom-never-${process.pid}`);
    await expect(missing.run([], [{ name: 'x', argv: ['touch', marker] }])).rejects.toBeInstanceOf(SandboxUnavailableError);
    expect(() => readFileSync(marker)).toThrow();
  });
});

describe.skipIf(!available)('the bubblewrap sandbox', () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  let hostDir = '';

  beforeAll(async () => {
    // A listener on the host's loopback: the sandbox must not reach it.
    server = createServer((s) => { connections++; s.end('secret'); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    // Stands in for the server's data directory.
    hostDir = mkdtempSync(join(tmpdir(), 'codeloom-host-'));
    writeFileSync(join(hostDir, 'codeloom.db'), 'host secret');
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(hostDir, { recursive: true, force: true });
  });

  it('runs the checks over the files in a fresh work directory, as an unprivileged user', async () => {
    const { checks } = await runner.run([{ path: 'src/a.txt', content: 'hello' }], [
      { name: 'read', argv: ['cat', 'src/a.txt'] },
      { name: 'who', argv: ['bash', '-c', 'id -u; pwd; ls -A'] },
    ]);
    expect(checks.map((c) => c.exit_code)).toEqual([0, 0]);
    expect(checks[0]!.output).toBe('hello');
    expect(checks[1]!.output.split('\n').slice(0, 3)).toEqual(['65534', '/sandbox/work', 'src']);
  });

  it('has no network: a connection to the host fails', async () => {
    const { checks } = await runner.run([{ path: 'net.js', content: `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('CONNECTED'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(1); });` }], [
      { name: 'connect', argv: ['node', 'net.js'] },
      { name: 'dns', argv: ['node', '-e', "require('dns').lookup('example.com', (e) => { console.log(e ? e.code : 'RESOLVED'); process.exit(e ? 1 : 0); })"], optional: true },
    ]);
    expect(checks[0]!.exit_code).toBe(1);
    expect(checks[0]!.output).toMatch(/ECONNREFUSED|ENETUNREACH/);
    expect(checks[1]!.exit_code).toBe(1);
    expect(connections).toBe(0);
  });

  it('cannot write outside its work directory, nor read the server\'s files', async () => {
    const { checks } = await runner.run([], [
      { name: 'write-host', argv: ['bash', '-c', `echo pwned > ${hostDir}/codeloom.db`], optional: true },
      { name: 'read-host', argv: ['cat', `${hostDir}/codeloom.db`], optional: true },
      { name: 'write-usr', argv: ['bash', '-c', 'echo pwned > /usr/pwned'], optional: true },
      { name: 'write-toolchain', argv: ['bash', '-c', 'echo pwned > /sandbox/node_modules/pwned'], optional: true },
      { name: 'read-etc', argv: ['cat', '/etc/shadow'], optional: true },
      { name: 'read-proc-host', argv: ['bash', '-c', 'ls /proc | grep -c "^[0-9]"'], optional: true },
    ]);
    for (const c of checks.slice(0, 5)) expect(c.exit_code, `${c.name}: ${c.output}`).not.toBe(0);
    expect(readFileSync(join(hostDir, 'codeloom.db'), 'utf8')).toBe('host secret');
    expect(readdirSync(hostDir)).toEqual(['codeloom.db']);
    // Only the sandbox's own processes are visible (its init, the driver, the shell, ls, grep).
    expect(Number(checks[5]!.output.trim())).toBeLessThan(10);
  });

  it('stops a fork bomb, a memory hog, an endless loop and a flood of output, each a failed check', async () => {
    // A whole-sandbox limit (processes, memory) stops the whole sandbox: the fork bomb gets one of its own.
    const bomb = await runner.run([], [{ name: 'fork-bomb', argv: ['bash', '-c', 'f() { f | f & }; f; sleep 30'] }, { name: 'never', argv: ['true'] }]);
    expect(bomb.checks[0]!.killed).toMatch(/process limit/);
    expect(bomb.checks[1]!.skipped).toBe(true);
    const { checks } = await runner.run([{ path: 'hog.py', content: 'x = []\nwhile True:\n    x.append(bytearray(10**7))\n' }], [
      { name: 'memory', argv: ['python3', 'hog.py'], optional: true },
      { name: 'cpu-loop', argv: ['bash', '-c', 'while :; do :; done'], optional: true },
      { name: 'flood', argv: ['bash', '-c', 'yes 0123456789abcdef'], optional: true },
      { name: 'disk', argv: ['bash', '-c', 'head -c 100000000 /dev/zero > big'], optional: true },
      { name: 'after', argv: ['echo', 'still here'], optional: true },
    ]);
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(byName.memory!.exit_code).not.toBe(0);
    expect(byName.memory!.output).toMatch(/MemoryError/);
    expect(byName['cpu-loop']!.exit_code).not.toBe(0);
    expect(byName['cpu-loop']!.killed).toMatch(/CPU|SIGKILL|SIGXCPU/);
    expect(byName.flood!.killed).toMatch(/output limit/);
    expect(byName.flood!.output.length).toBeLessThanOrEqual(limits.outputTail);
    expect(byName.disk!.exit_code).not.toBe(0);
    expect(byName.after!.output.trim()).toBe('still here');
  }, 30_000);

  it('without a cgroup, the server\'s watchdog bounds the whole sandbox\'s memory (shared memory too) and processes from outside', async () => {
    const watched = new SandboxRunner('bwrap', tools, { ...limits, memoryMb: 64, maxProcesses: 8 }, { cgroup: 'off' });
    expect(watched.enforcement).toMatchObject({ mechanism: 'watchdog', reason: expect.stringContaining('off') });
    const shm = 'import mmap\nm = mmap.mmap(-1, 1 << 30)\nfor i in range(0, 1 << 30, 4096):\n    m[i] = 1\nprint("TOUCHED")\n';
    const memory = await watched.run([{ path: 'shm.py', content: shm }], [{ name: 'shm', argv: ['python3', 'shm.py'] }]);
    expect(memory.checks[0]!.killed, memory.checks[0]!.output).toMatch(/memory limit/);
    expect(memory.checks[0]!.output).not.toContain('TOUCHED');
    const bomb = await watched.run([], [{ name: 'sleepers', argv: ['bash', '-c', 'for i in $(seq 40); do sleep 30 & done; wait'] }]);
    expect(bomb.checks[0]!.killed).toMatch(/process limit/);
  }, 30_000);

  it('names why a cgroup v2 directory cannot be used', () => {
    const r = new SandboxRunner('bwrap', tools, limits, { cgroup: '/nonexistent/cgroup' });
    expect(r.enforcement).toMatchObject({ mechanism: 'watchdog', reason: expect.stringContaining('not a writable cgroup directory') });
  });

  it('kills the whole sandbox at the wall-time limit', async () => {
    const short = new SandboxRunner('bwrap', tools, { ...limits, timeoutMs: 1500 });
    const { checks, timedOut } = await short.run([], [{ name: 'sleep', argv: ['bash', '-c', 'sleep 60 & sleep 60'] }, { name: 'never', argv: ['true'] }]);
    expect(timedOut).toBe(true);
    expect(checks[0]!.killed).toMatch(/time limit/);
    expect(checks[1]!.skipped).toBe(true);
  });
});
