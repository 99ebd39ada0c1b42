import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { sandboxDriver, type DriverJob } from './sandbox-driver.js';
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
  /** Share the host's network (the install phase only; checks never get it). */
  network?: boolean;
  /** A host directory bound read-write as the work directory instead of a fresh tmpfs (the install phase only). */
  workDir?: string;
  /** Host directories bound read-only inside the work directory: [host path, path relative to it]. */
  workMounts?: Array<[string, string]>;
  /** Extra environment inside. */
  env?: Record<string, string>;
  onStart?: (index: number, check: CheckSpec) => void;
  onOutput?: (index: number, text: string) => void;
}

export type SandboxStatus = { available: true } | { available: false; reason: string };

export { SandboxUnavailableError };

const ETC = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/localtime', '/etc/mime.types'];

/**
 * Runs commands over a set of files inside bubblewrap: new user, pid, network, IPC, UTS and cgroup
 * namespaces (so no network at all), no capabilities, only /usr and the toolchains mounted read-only,
 * a fresh tmpfs work directory and /tmp bounded in size, rlimits per process, a process-count
 * watchdog, per-check output caps and a wall clock that kills the whole sandbox. See docs/verification.md.
 */
/** The driver's source; `__name` is the helper esbuild (tsx, vitest) adds to keep function names. */
const DRIVER = `var __name = (f) => f;\n(${sandboxDriver.toString()})()`;

export class SandboxRunner {
  private status: Promise<SandboxStatus> | undefined;
  private failedAt: number | undefined;

  constructor(private readonly bwrap: string, private readonly tools: Toolchains, readonly limits: SandboxLimits) {}

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
  async run(files: SandboxFile[], checks: CheckSpec[], hooks: RunHooks = {}): Promise<{ checks: CheckRun[]; timedOut: boolean }> {
    const status = await this.selfTest();
    if (!status.available) throw new SandboxUnavailableError(status.reason);
    return this.execute(files, checks, hooks, false);
  }

  private bwrapArgs(hooks: RunHooks, diskMb: number): string[] {
    const args = [
      '--unshare-user', '--unshare-pid', ...(hooks.network ? [] : ['--unshare-net']), '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
      '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--uid', '65534', '--gid', '65534', '--hostname', 'sandbox',
      '--ro-bind', '/usr', '/usr',
    ];
    for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
      if (!existsSync(top)) continue;
      const usr = `/usr${top}`;
      // merged-/usr systems: /bin → usr/bin
      args.push(...(existsSync(usr) ? ['--symlink', `usr${top}`, top] : ['--ro-bind', top, top]));
    }
    const etc = [...ETC, ...readdirSync('/etc').filter((d) => /^java/.test(d)).map((d) => `/etc/${d}`)];
    for (const p of etc) if (existsSync(p)) args.push('--ro-bind', p, p);
    for (const m of this.tools.mounts) args.push('--ro-bind', m, m);
    if (this.tools.nodeModules) args.push('--ro-bind', this.tools.nodeModules, SANDBOX_NODE_MODULES);
    const size = String(diskMb * 1024 * 1024);
    args.push(
      '--dev', '/dev', '--proc', '/proc',
      '--size', size, '--tmpfs', '/tmp',
      ...(hooks.workDir ? ['--bind', hooks.workDir, SANDBOX_WORK] : ['--size', size, '--tmpfs', SANDBOX_WORK]),
      ...(hooks.workMounts ?? []).flatMap(([host, rel]) => ['--ro-bind', host, `${SANDBOX_WORK}/${rel}`]),
      '--chdir', SANDBOX_WORK, '--clearenv',
    );
    if (hooks.network) for (const p of ['/etc/resolv.conf', '/etc/hosts', '/etc/ssl', '/etc/ca-certificates', '/etc/nsswitch.conf']) if (existsSync(p)) args.push('--ro-bind', p, p);
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

  private execute(files: SandboxFile[], checks: CheckSpec[], hooks: RunHooks, probe: boolean): Promise<{ checks: CheckRun[]; timedOut: boolean }> {
    const L = hooks.limits ?? this.limits;
    const timeoutMs = probe ? 20_000 : L.timeoutMs;
    const job: DriverJob = {
      files: files.map((f) => ({ ...f, ...(/\.(sh|bash)$/.test(f.path) ? { mode: 0o755 } : {}) })),
      checks,
      limits: { checkTimeoutMs: timeoutMs, outputLimit: L.outputLimit, outputTail: L.outputTail, maxProcesses: L.maxProcesses, cpuSeconds: L.cpuSeconds, memoryMb: L.memoryMb, fileMb: L.diskMb },
    };
    const results: CheckRun[] = checks.map((c) => ({ name: c.name, command: c.argv.join(' '), exit_code: null, duration_ms: 0, output: '', skipped: true }));
    return new Promise((resolve, reject) => {
      const child = spawn(this.bwrap, [...this.bwrapArgs(hooks, L.diskMb), 'node', '-e', DRIVER], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      let timedOut = false;
      let stderr = '';
      let stdoutBytes = 0;
      const killAll = () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } };
      const timer = setTimeout(() => { timedOut = true; killAll(); }, timeoutMs);
      const onAbort = () => killAll();
      hooks.signal?.addEventListener('abort', onAbort, { once: true });
      let running = -1;
      child.on('error', (error) => { clearTimeout(timer); reject(new SandboxUnavailableError(`bwrap could not start (${this.bwrap}): ${error.message}`)); });
      child.stderr.on('data', (d: Buffer) => { stderr = (stderr + d.toString('utf8')).slice(-4000); });
      child.stdin.on('error', () => { /* the sandbox died before reading: reported below */ });
      child.stdin.end(JSON.stringify(job));
      const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
      lines.on('line', (line) => {
        stdoutBytes += line.length;
        // The driver caps each check's output; this only guards against a runaway report.
        if (stdoutBytes > L.outputLimit * (checks.length + 1) + 1_000_000) { killAll(); return; }
        let event: { t: string; check?: number; text?: string; exit_code?: number; duration_ms?: number; output?: string; killed?: string };
        try { event = JSON.parse(line) as typeof event; } catch { return; }
        const i = event.check ?? -1;
        const r = results[i];
        if (event.t === 'start' && r) { running = i; hooks.onStart?.(i, checks[i]!); }
        else if (event.t === 'out' && r && event.text) hooks.onOutput?.(i, event.text);
        else if (event.t === 'end' && r) {
          running = -1;
          Object.assign(r, { exit_code: event.exit_code ?? null, duration_ms: event.duration_ms ?? 0, output: event.output ?? '', skipped: false }, event.killed ? { killed: event.killed } : {});
        }
      });
      const started = Date.now();
      child.on('close', (code) => {
        clearTimeout(timer);
        hooks.signal?.removeEventListener('abort', onAbort);
        const cut = results[running];
        if (cut) {
          // The whole sandbox was stopped while this check ran.
          const why = timedOut ? `time limit: ${timeoutMs} ms` : hooks.signal?.aborted ? 'cancelled' : `the sandbox ended (exit ${String(code)})`;
          Object.assign(cut, { exit_code: 137, duration_ms: Date.now() - started, output: `${stderr.slice(-L.outputTail)}\n[stopped by the sandbox: ${why}]`.trim(), skipped: false, killed: why });
        }
        if (!timedOut && !hooks.signal?.aborted && results.every((r) => r.skipped) && checks.length) {
          reject(new SandboxUnavailableError(`the sandbox did not run (bwrap exit ${String(code)}): ${stderr.trim().slice(-500) || 'no output'}`));
          return;
        }
        resolve({ checks: results, timedOut });
      });
    });
  }
}
