import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { sandboxDriver, type DriverJob } from './sandbox-driver.js';
import { createSandboxCgroup, detectCgroups, removeStaleCgroups, type CgroupHost, type SandboxCgroup } from './sandbox-cgroup.js';
import { reportReader, type DriverEvent } from './sandbox-report.js';
import { seccompFilter } from './sandbox-seccomp.js';
import { startWatchdog } from './sandbox-watchdog.js';
import { SANDBOX_NODE_MODULES, SANDBOX_WORK, type Toolchains } from './toolchains.js';
import { SandboxUnavailableError } from '../../errors.js';

export interface SandboxLimits {
  /** Wall time of one whole run (every check), in ms: past it the sandbox's process group is killed. */
  timeoutMs: number;
  /** CPU seconds per process (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Heap per process in MB (RLIMIT_DATA). */
  memoryMb: number;
  /** Processes in the sandbox at once. */
  maxProcesses: number;
  /** Bytes one check may print before it is stopped. */
  outputLimit: number;
  /** Bytes of each check's output kept (the tail). */
  outputTail: number;
  /** Size of the tmpfs work directory and /tmp, in MB (also the largest file). */
  diskMb: number;
}

export interface CheckSpec {
  name: string;
  argv: string[];
  env?: Record<string, string>;
  /** Runs even when an earlier check failed, and its failure does not skip later ones. */
  optional?: boolean;
  /** argv is joined into one shell command line (for `a && b`, globs). */
  shell?: boolean;
}

export interface CheckRun {
  name: string;
  command: string;
  exit_code: number | null;
  duration_ms: number;
  output: string;
  /** Why the sandbox stopped it (time, CPU, output, process limit), when it did. */
  killed?: string;
  skipped?: boolean;
}

export interface SandboxFile { path: string; content: string }

export interface RunHooks {
  signal?: AbortSignal | undefined;
  /** This run's limits, when not the runner's own (e.g. a shorter wall time). */
  limits?: SandboxLimits;
  /**
   * A host Unix socket (the install phase's registry proxy): the sandbox still has no network, but TCP
   * connections to 127.0.0.1:REGISTRY_RELAY_PORT inside it are relayed to this socket by the driver.
   */
  registrySocket?: string;
  /**
   * Files written only once check `afterCheck` has ended, when the registry relay closes: the install phase runs
   * over the manifest alone, and nothing the model wrote is in the sandbox while it can reach the registry.
   */
  later?: { afterCheck: number; files: SandboxFile[] };
  /** Extra environment inside. */
  env?: Record<string, string>;
  /** After the checks, the work directory's regular UTF-8 files come back in `collected` (the engineer's `run`; sandbox-driver.ts). */
  collect?: { maxFiles: number; maxFileBytes: number; maxBytes: number };
  onStart?: (index: number, check: CheckSpec) => void;
  onOutput?: (index: number, text: string) => void;
}

/** The work directory after the checks, when the run asked for it (`collect`): `complete` false when files were left out. */
export interface CollectedFiles { files: SandboxFile[]; skipped: string[]; complete: boolean }

export type SandboxStatus = { available: true } | { available: false; reason: string };

export { SandboxUnavailableError };

/** Where the install phase's registry is reached inside the sandbox (relayed by the driver to the proxy's socket). */
export const REGISTRY_RELAY_PORT = 4873;

/**
 * The sandbox's own tasks beside the code's, counted in the cgroup: the outer bwrap (1), the driver (4 threads
 * with DRIVER_FLAGS), the check's bwrap and its init (2), and one to spare; for the watchdog, which counts
 * processes: the outer bwrap, the driver, the check's bwrap and its init.
 */
const OWN_TASKS = 8;
const OWN_PROCESSES = 4;
/** Memory the driver itself may take on top of the code's limit. */
const OWN_MEMORY_MB = 64;
/** The report: longest line and most bytes in all (the driver caps each check's output well below). */
const REPORT_LINE = 256 * 1024;

const ETC = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/localtime', '/etc/mime.types'];
/** The outer layer's view: one tmpfs of the disk size for the work directory and /tmp, a small private one for the driver. */
const BOX = '/box';
const DRIVER_DIR = '/driver';
/** The driver is small: one V8 worker thread, a small heap. */
const DRIVER_FLAGS = ['--v8-pool-size=1', '--max-old-space-size=48', '--max-semi-space-size=4'];
/** The driver's source; `__name` is the helper esbuild (tsx, vitest) adds to keep function names. */
const DRIVER = `var __name = (f) => f;\n(${sandboxDriver.toString()})()`;
/** Joins the cgroups named before `--` (writing its own pid into each cgroup.procs), then execs bwrap. */
const JOIN_AND_EXEC = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 121; shift; done; shift; exec "$@"';
/** Closes every inherited descriptor above 3 (the info fd); bash only: dash takes single digits, and a failed `exec` would end it. */
const CLOSE_FDS = 'for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 3 ] 2>/dev/null && eval "exec $n>&-"; done; ';

function absolute(bin: string): string | undefined {
  if (bin.includes('/')) return existsSync(bin) ? realpathSync(bin) : undefined;
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const p = join(dir, bin);
    if (dir && existsSync(p)) return realpathSync(p);
  }
  return undefined;
}

const underUsr = (p: string) => p === '/usr' || p.startsWith('/usr/');
/** Shell scripts are written executable. */
const withMode = (f: SandboxFile) => ({ ...f, ...(/\.(sh|bash)$/.test(f.path) ? { mode: 0o755 } : {}) });

/**
 * Runs commands over a set of files in two layers of bubblewrap. The outer layer (new user, network, IPC,
 * UTS and cgroup namespaces, the host's pid namespace; read-only root; one tmpfs of the disk size for the work directory and
 * /tmp) runs only the driver; each check runs in an inner layer of its own (a new pid namespace that cannot
 * see the driver, `--disable-userns`, a seccomp filter, no capabilities, read-only root and /dev, a small
 * /dev/shm, only fds 0–2). The whole sandbox sits in a cgroup with memory and task limits, or, where the
 * host has none, under the server's own watchdog; the server reads the driver's report with bounds and
 * kills the sandbox from outside at the wall-time limit or when its caller goes. See docs/verification.md.
 */
export class SandboxRunner {
  private status: Promise<SandboxStatus> | undefined;
  private failedAt: number | undefined;
  private readonly cgroups: CgroupHost | { unavailable: string };
  private readonly seccomp: Buffer | undefined;
  private mounts: string[] | undefined;

  constructor(private readonly bwrap: string, private readonly tools: Toolchains, readonly limits: SandboxLimits, options: { cgroup?: string } = {}) {
    this.cgroups = detectCgroups(options.cgroup ?? 'auto');
    if (!('unavailable' in this.cgroups)) removeStaleCgroups(this.cgroups);
    this.seccomp = seccompFilter();
  }

  /** How the whole-sandbox limits are enforced here: `cgroup v1`, `cgroup v2` or `watchdog` (with why no cgroup). */
  get enforcement(): { mechanism: 'cgroup v1' | 'cgroup v2' | 'watchdog'; reason?: string; seccomp: boolean } {
    const c = this.cgroups;
    return 'unavailable' in c ? { mechanism: 'watchdog', reason: c.unavailable, seccomp: !!this.seccomp } : { mechanism: c.version === 1 ? 'cgroup v1' : 'cgroup v2', seccomp: !!this.seccomp };
  }

  /** Whether the sandbox works here: bwrap present and a self-test inside it succeeds (checked once). */
  selfTest(): Promise<SandboxStatus> {
    // A failed self-test is tried again after a minute (bwrap installed meanwhile, a transient failure).
    if (this.status && this.failedAt && Date.now() - this.failedAt > 60_000) { this.status = undefined; this.failedAt = undefined; }
    this.status ??= (async (): Promise<SandboxStatus> => {
      try {
        const { checks } = await this.execute([{ path: 'probe.txt', content: 'ok' }], [{ name: 'self-test', argv: ['cat', 'probe.txt'] }], {}, true);
        const probe = checks[0];
        if (probe?.exit_code === 0 && probe.output.trim() === 'ok') return { available: true };
        this.failedAt = Date.now();
        return { available: false, reason: `the sandbox self-test failed: ${probe?.output.trim().slice(-300) || 'no report'}` };
      } catch (error) {
        this.failedAt = Date.now();
        return { available: false, reason: error instanceof Error ? error.message : String(error) };
      }
    })();
    return this.status;
  }

  /** Runs the checks in order in one fresh sandbox; a required check that fails skips the required ones after it. */
  async run(files: SandboxFile[], checks: CheckSpec[], hooks: RunHooks = {}): Promise<{ checks: CheckRun[]; timedOut: boolean; collected?: CollectedFiles }> {
    const status = await this.selfTest();
    if (!status.available) throw new SandboxUnavailableError(status.reason);
    return this.execute(files, checks, hooks, false);
  }

  /** What both layers bind read-only at the same path: /usr and its links, a few /etc entries, the toolchains (looked up once). */
  private commonMounts(): string[] {
    return (this.mounts ??= this.lookUpMounts());
  }

  private lookUpMounts(): string[] {
    const args = ['--ro-bind', '/usr', '/usr'];
    for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
      if (!existsSync(top)) continue;
      const usr = `/usr${top}`;
      // merged-/usr systems: /bin → usr/bin
      args.push(...(existsSync(usr) ? ['--symlink', `usr${top}`, top] : ['--ro-bind', top, top]));
    }
    const etc = [...ETC, ...readdirSync('/etc').filter((d) => /^java/.test(d)).map((d) => `/etc/${d}`)];
    for (const p of etc) if (existsSync(p)) args.push('--ro-bind', p, p);
    for (const m of this.tools.mounts) args.push('--ro-bind', m, m);
    return args;
  }

  private outerArgs(bwrapPath: string, hooks: RunHooks, diskMb: number): string[] {
    const args = [
      // No pid namespace of its own: the inner bwrap reads /proc/<pid> of what it starts, so this layer's pids must be
      // the host /proc's. The code never runs here; each check gets a pid namespace of its own.
      '--unshare-user', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
      '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--uid', '65534', '--gid', '65534', '--hostname', 'sandbox',
      ...this.commonMounts(),
    ];
    if (!underUsr(bwrapPath)) args.push('--ro-bind', bwrapPath, bwrapPath);
    if (this.tools.nodeModules) args.push('--ro-bind', this.tools.nodeModules, this.tools.nodeModules);
    // The host's /proc, writable: the inner bwrap writes its uid map, and a fresh /proc for the inner pid
    // namespace can only be mounted where a whole one is visible. Only the driver and bwrap run here.
    args.push('--bind', '/proc', '/proc', '--dev', '/dev');
    args.push('--size', String(diskMb * 1024 * 1024), '--tmpfs', BOX, '--dir', `${BOX}/tmp`);
    args.push('--dir', `${BOX}/work`);
    args.push('--size', String(1024 * 1024), '--tmpfs', DRIVER_DIR);
    if (hooks.registrySocket) args.push('--bind', hooks.registrySocket, `${DRIVER_DIR}/registry.sock`);
    // bwrap (the inner one) mounts its new root's scaffolding on /tmp.
    args.push('--dir', '/tmp', '--remount-ro', '/', '--chdir', `${BOX}/work`, '--clearenv',
      '--setenv', 'PATH', this.tools.path.join(':'), '--setenv', 'HOME', `${BOX}/tmp`, '--setenv', 'LANG', 'C.UTF-8');
    return args;
  }

  /** The inner layer, seen from the outer one: what a check runs in. */
  private innerArgs(bwrapPath: string, hooks: RunHooks, diskMb: number): string[] {
    const args = [
      bwrapPath, '--unshare-user', '--disable-userns', '--unshare-pid', '--unshare-cgroup-try',
      '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--uid', '65534', '--gid', '65534',
      ...this.commonMounts(),
    ];
    if (this.tools.nodeModules) args.push('--ro-bind', this.tools.nodeModules, SANDBOX_NODE_MODULES);
    args.push('--bind', `${BOX}/work`, SANDBOX_WORK, '--bind', `${BOX}/tmp`, '/tmp');
    const shm = Math.max(1, Math.min(64, Math.floor(diskMb / 4)));
    args.push('--proc', '/proc', '--dev', '/dev', '--size', String(shm * 1024 * 1024), '--tmpfs', '/dev/shm', '--remount-ro', '/dev', '--remount-ro', '/',
      '--chdir', SANDBOX_WORK, '--clearenv');
    const env: Record<string, string> = {
      PATH: this.tools.path.join(':'), HOME: '/tmp', TMPDIR: '/tmp', LANG: 'C.UTF-8', CI: '1', NO_COLOR: '1',
      CARGO_HOME: '/tmp/cargo', CARGO_NET_OFFLINE: 'true', GOCACHE: '/tmp/go-cache', GOPATH: '/tmp/go', GOFLAGS: '-mod=mod', GOPROXY: 'off', GOTOOLCHAIN: 'local',
      PYTHONDONTWRITEBYTECODE: '1', PYTHONPYCACHEPREFIX: '/tmp/pycache', npm_config_cache: '/tmp/npm-cache', npm_config_update_notifier: 'false',
      ...this.tools.env,
      ...hooks.env,
    };
    for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
    return args;
  }

  private execute(files: SandboxFile[], checks: CheckSpec[], hooks: RunHooks, probe: boolean): Promise<{ checks: CheckRun[]; timedOut: boolean; collected?: CollectedFiles }> {
    const L = hooks.limits ?? this.limits;
    const timeoutMs = probe ? 20_000 : L.timeoutMs;
    const results: CheckRun[] = checks.map((c) => ({ name: c.name, command: c.argv.join(' '), exit_code: null, duration_ms: 0, output: '', skipped: true }));
    const bwrapPath = absolute(this.bwrap);
    if (!bwrapPath) return Promise.reject(new SandboxUnavailableError(`bwrap could not start (${this.bwrap}): not found`));
    if (hooks.signal?.aborted) return Promise.resolve({ checks: results, timedOut: false });
    const job: DriverJob = {
      files: files.map(withMode),
      checks,
      limits: { checkTimeoutMs: timeoutMs, outputLimit: L.outputLimit, outputTail: L.outputTail, maxProcesses: L.maxProcesses, cpuSeconds: L.cpuSeconds, memoryMb: L.memoryMb, fileMb: L.diskMb },
      work: `${BOX}/work`,
      inner: this.innerArgs(bwrapPath, hooks, L.diskMb),
      ...(this.seccomp ? { seccompFile: `${DRIVER_DIR}/seccomp.bpf` } : {}),
      ...(hooks.registrySocket ? { registry: { port: REGISTRY_RELAY_PORT, socket: `${DRIVER_DIR}/registry.sock` } } : {}),
      ...(hooks.later ? { later: { afterCheck: hooks.later.afterCheck, files: hooks.later.files.map(withMode) } } : {}),
      ...(hooks.collect ? { collect: hooks.collect } : {}),
    };
    const memoryBytes = (L.memoryMb + OWN_MEMORY_MB) * 1024 * 1024;
    let cgroup: SandboxCgroup | undefined;
    if (!('unavailable' in this.cgroups)) {
      try { cgroup = createSandboxCgroup(this.cgroups, { memoryBytes, tasks: L.maxProcesses + OWN_TASKS }); } catch (error) {
        return Promise.reject(new SandboxUnavailableError(`the sandbox's cgroup could not be made: ${error instanceof Error ? error.message : String(error)}`));
      }
    }
    const outer = this.outerArgs(bwrapPath, hooks, L.diskMb);
    // The seccomp program reaches the driver's private tmpfs as a file (written by a tiny first step).
    const seccompB64 = this.seccomp?.toString('base64');
    const driver = seccompB64
      ? `require('node:fs').writeFileSync(${JSON.stringify(`${DRIVER_DIR}/seccomp.bpf`)}, Buffer.from(${JSON.stringify(seccompB64)}, 'base64'));\n${DRIVER}`
      : DRIVER;
    const bash = existsSync('/bin/bash');

    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(bash ? '/bin/bash' : '/bin/sh', ['-c', `${bash ? CLOSE_FDS : ''}${JOIN_AND_EXEC}`, 'launch', ...(cgroup?.procsFiles ?? []), '--', bwrapPath, '--info-fd', '3', ...outer, 'node', ...DRIVER_FLAGS, '-e', driver], {
          detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
        });
      } catch (error) {
        void cgroup?.dispose();
        reject(new SandboxUnavailableError(`bwrap could not start (${this.bwrap}): ${error instanceof Error ? error.message : String(error)}`));
        return;
      }
      let timedOut = false;
      let stopped: string | undefined;
      let malformed: string | undefined;
      let filesError: string | undefined;
      let stderr = '';
      let running = -1;
      /** What each check printed so far: kept for a check the sandbox is stopped in the middle of. */
      const tails = checks.map(() => '');
      let layerPid: number | undefined;
      let stopWatchdog: (() => void) | undefined;
      // The launcher's group (bwrap's monitor), the driver's own session group (it is the leader: --new-session), the cgroup's tasks.
      const killAll = () => {
        try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
        if (layerPid) for (const target of [-layerPid, layerPid]) { try { process.kill(target, 'SIGKILL'); } catch { /* gone */ } }
        cgroup?.killAll();
      };
      const stop = (why: string) => { stopped ??= why; killAll(); };
      const timer = setTimeout(() => { timedOut = true; stop(`time limit: ${timeoutMs} ms`); }, timeoutMs);
      const onAbort = () => stop('cancelled');
      hooks.signal?.addEventListener('abort', onAbort, { once: true });
      // The kernel's counters, read from outside: a memory or task limit hit stops the sandbox with its reason.
      const poll = cgroup ? setInterval(() => { const hit = cgroup!.limitHit(); if (hit) stop(hit); }, 50) : undefined;
      // bwrap's info: the host pid of the outer layer's process, the driver.
      let info = '';
      (child.stdio[3] as NodeJS.ReadableStream | null)?.on('data', (d: Buffer) => {
        if (info.length > 4096) return;
        info += d.toString('utf8');
        const m = /"child-pid"\s*:\s*(\d+)/.exec(info);
        if (m && !layerPid) {
          layerPid = Number(m[1]);
          if (!cgroup) stopWatchdog = startWatchdog(child.pid!, { processes: L.maxProcesses + OWN_PROCESSES, memoryBytes }, stop);
        }
      });
      (child.stdio[3] as NodeJS.ReadableStream | null)?.on('error', () => { /* closed */ });
      child.on('error', (error) => {
        clearTimeout(timer);
        if (poll) clearInterval(poll);
        stopWatchdog?.();
        void cgroup?.dispose();
        reject(new SandboxUnavailableError(`bwrap could not start (${this.bwrap}): ${error.message}`));
      });
      child.stderr!.on('data', (d: Buffer) => { stderr = (stderr + d.toString('utf8')).slice(-4000); });
      child.stdin!.on('error', () => { /* the sandbox died before reading: reported below */ });
      child.stdin!.end(JSON.stringify(job));
      const gathered: SandboxFile[] = [];
      let collected: CollectedFiles | undefined;
      const onEvent = (event: DriverEvent) => {
        if (event.t === 'files') { filesError = event.error; return; }
        if (event.t === 'file') { if (hooks.collect && !collected && gathered.length < hooks.collect.maxFiles) gathered.push({ path: event.path, content: event.content }); return; }
        if (event.t === 'collected') { if (hooks.collect) collected = { files: gathered, skipped: event.skipped, complete: !event.truncated }; return; }
        if (event.t === 'done') return;
        const r = results[event.check]!;
        if (event.t === 'start') { running = event.check; hooks.onStart?.(event.check, checks[event.check]!); }
        else if (event.t === 'out') { tails[event.check] = (tails[event.check] + event.text).slice(-L.outputTail); hooks.onOutput?.(event.check, event.text); }
        else if (event.t === 'end') {
          running = -1;
          // A check the kernel stopped at a whole-sandbox limit (the OOM killer's SIGKILL) ends with that reason, and so does the sandbox.
          const hit = stopped ?? cgroup?.limitHit();
          const killed = hit ?? event.killed;
          Object.assign(r, { exit_code: killed && event.exit_code === 0 ? 137 : event.exit_code, duration_ms: event.duration_ms, output: hit ? `${event.output}\n[stopped by the sandbox: ${hit}]` : event.output, skipped: false }, killed ? { killed } : {});
          if (hit) stop(hit);
        }
      };
      const reader = reportReader({ checks: checks.length, maxLine: REPORT_LINE, maxTotal: (L.outputLimit + 1_000_000) * (checks.length + 1) + (hooks.collect ? hooks.collect.maxBytes * 7 + 1_000_000 : 0), maxText: Math.max(L.outputTail, 4096) + 1000, onEvent });
      child.stdout!.on('data', (chunk: Buffer) => {
        if (!reader.push(chunk)) { malformed = reader.malformed; stop('malformed report'); child.stdout!.destroy(); }
      });
      const started = Date.now();
      child.on('close', (code) => {
        clearTimeout(timer);
        if (poll) clearInterval(poll);
        stopWatchdog?.();
        hooks.signal?.removeEventListener('abort', onAbort);
        // Whatever is left of the driver's session (a check's bwrap that failed half-way) goes with it.
        if (layerPid) { try { process.kill(-layerPid, 'SIGKILL'); } catch { /* gone */ } }
        // A limit the kernel enforced while the sandbox was ending still names the reason.
        const hit = cgroup?.limitHit();
        if (hit && !stopped) stopped = hit;
        void cgroup?.dispose();
        if (malformed) { reject(new SandboxReportError(malformed)); return; }
        if (filesError) { reject(new SandboxFilesError(filesError)); return; }
        const cut = results[running];
        if (cut) {
          // The whole sandbox was stopped while this check ran.
          const why = stopped ?? `the sandbox ended (exit ${String(code)})`;
          const printed = tails[running] || stderr;
          Object.assign(cut, { exit_code: 137, duration_ms: Date.now() - started, output: `${printed}\n[stopped by the sandbox: ${why}]`.trim().slice(-L.outputTail), skipped: false, killed: why });
        }
        if (!timedOut && !hooks.signal?.aborted && !stopped && results.every((r) => r.skipped) && checks.length) {
          reject(new SandboxUnavailableError(`the sandbox did not run (bwrap exit ${String(code)}): ${stderr.trim().slice(-500) || 'no output'}`));
          return;
        }
        resolve({ checks: results, timedOut, ...(collected ? { collected } : {}) });
      });
    });
  }
}

/** The driver's report broke its bounds or its format: the attempt is an `error`, never a verdict. */
export class SandboxReportError extends Error {
  constructor(why: string) { super(`the sandbox's report was refused: ${why}`); this.name = 'SandboxReportError'; }
}

/** The files could not be laid out (a file where a directory must go, the disk limit): an `error` with the reason. */
export class SandboxFilesError extends Error {
  constructor(why: string) { super(why); this.name = 'SandboxFilesError'; }
}
