import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Limits for one whole sandbox enforced by the kernel from outside it: a cgroup per verification attempt
 * holding every process of the sandbox (the driver too), with a memory limit that counts every kind of
 * memory the kernel charges (anonymous, shared, tmpfs and page cache pages) and a task limit. Nothing
 * inside can pause or lift it. cgroup v2 needs a delegated directory (`CODELOOM_VERIFY_CGROUP=/path`);
 * cgroup v1 (hybrid hosts) is found by itself where the memory and pids hierarchies are writable.
 */
export interface CgroupHost {
  version: 1 | 2;
  /** v2: the delegated parent. v1: the memory and pids parents (our own cgroups in each hierarchy). */
  parents: { memory: string; pids: string };
}

export interface SandboxCgroup {
  /** The cgroup.procs files a process writes its pid into to join (before it execs the sandbox). */
  readonly procsFiles: string[];
  /** Why the kernel stopped the sandbox since the last call: the memory or the process limit, else undefined. */
  limitHit(): string | undefined;
  /** SIGKILL everything in it (what the sandbox left behind included). */
  killAll(): void;
  /** Removes it once empty (retries a few times while the last processes exit). */
  dispose(): Promise<void>;
}

const CG = '/sys/fs/cgroup';

function writable(dir: string): boolean {
  try { accessSync(dir, constants.W_OK); return existsSync(join(dir, 'cgroup.procs')); } catch { return false; }
}

/** Where this process sits in a v1 hierarchy (`4:memory:/a/b`), from /proc/self/cgroup. */
function v1Path(controller: string): string | undefined {
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, path] = line.split(':');
      if (controllers?.split(',').includes(controller)) return path;
    }
  } catch { /* not Linux */ }
  return undefined;
}

/**
 * Which cgroups this host lets the server use: `setting` is `auto` (v1 when writable, else a delegated v2
 * directory given by path), `off`, or a path to a delegated cgroup v2 directory.
 */
export function detectCgroups(setting: string): CgroupHost | { unavailable: string } {
  if (setting === 'off') return { unavailable: 'cgroups are turned off (CODELOOM_VERIFY_CGROUP=off)' };
  if (setting !== 'auto') {
    if (!writable(setting)) return { unavailable: `CODELOOM_VERIFY_CGROUP=${setting} is not a writable cgroup directory` };
    const controllers = safeRead(join(setting, 'cgroup.subtree_control')) ?? '';
    const missing = ['memory', 'pids'].filter((c) => !controllers.split(/\s+/).includes(c));
    if (missing.length) return { unavailable: `${setting}/cgroup.subtree_control lacks ${missing.join(' and ')} (enable them: echo "+memory +pids" > ${setting}/cgroup.subtree_control)` };
    return { version: 2, parents: { memory: setting, pids: setting } };
  }
  const memory = v1Path('memory');
  const pids = v1Path('pids');
  if (memory !== undefined && pids !== undefined) {
    const m = join(CG, 'memory', memory);
    const p = join(CG, 'pids', pids);
    if (writable(m) && writable(p)) return { version: 1, parents: { memory: m, pids: p } };
  }
  return { unavailable: 'no writable cgroup v1 memory and pids hierarchies, and no delegated cgroup v2 directory (CODELOOM_VERIFY_CGROUP)' };
}

/** Removes the empty cgroups that servers no longer running left behind (a process killed before it could clean up). */
export function removeStaleCgroups(host: CgroupHost): void {
  for (const parent of new Set([host.parents.memory, host.parents.pids])) {
    let names: string[] = [];
    try { names = readdirSync(parent); } catch { continue; }
    for (const name of names) {
      const m = /^codeloom-verify-(\d+)-[0-9a-f]+$/.exec(name);
      if (!m || Number(m[1]) === process.pid || existsSync(`/proc/${m[1]}`)) continue;
      try { rmdirSync(join(parent, name)); } catch { /* still has processes, or gone */ }
    }
  }
}

function safeRead(file: string): string | undefined {
  try { return readFileSync(file, 'utf8'); } catch { return undefined; }
}

/** A `key value` counter of a cgroup events/stat file. */
function counter(file: string, key: string): number {
  const text = safeRead(file);
  const m = text ? new RegExp(`^${key} (\\d+)$`, 'm').exec(text) : null;
  return m ? Number(m[1]) : 0;
}

export interface CgroupLimits { memoryBytes: number; tasks: number }

/** Makes the cgroup(s) of one sandbox with its limits; throws when the host refuses. */
export function createSandboxCgroup(host: CgroupHost, limits: CgroupLimits): SandboxCgroup {
  const name = `codeloom-verify-${process.pid}-${randomBytes(6).toString('hex')}`;
  const dirs = host.version === 2 ? [join(host.parents.memory, name)] : [join(host.parents.memory, name), join(host.parents.pids, name)];
  const memDir = dirs[0]!;
  const pidsDir = dirs.at(-1)!;
  for (const d of dirs) mkdirSync(d);
  try {
    if (host.version === 2) {
      writeFileSync(join(memDir, 'memory.max'), String(limits.memoryBytes));
      if (existsSync(join(memDir, 'memory.swap.max'))) writeFileSync(join(memDir, 'memory.swap.max'), '0');
      writeFileSync(join(pidsDir, 'pids.max'), String(limits.tasks));
    } else {
      writeFileSync(join(memDir, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      // Swap counts as memory too where the kernel accounts it (memsw after the plain limit).
      if (existsSync(join(memDir, 'memory.memsw.limit_in_bytes'))) { try { writeFileSync(join(memDir, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)); } catch { /* swap accounting off */ } }
      writeFileSync(join(pidsDir, 'pids.max'), String(limits.tasks));
    }
  } catch (error) {
    for (const d of dirs) { try { rmdirSync(d); } catch { /* best effort */ } }
    throw error;
  }
  const oomFile = host.version === 2 ? join(memDir, 'memory.events') : join(memDir, 'memory.oom_control');
  const tasksHit = () => counter(join(pidsDir, 'pids.events'), 'max');
  const memoryHit = () => counter(oomFile, 'oom_kill') + (host.version === 2 ? counter(oomFile, 'max') : 0);
  const memoryBase = memoryHit();
  let tasksBase = tasksHit();
  const procs = () => dirs.flatMap((d) => (safeRead(join(d, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number));
  return {
    procsFiles: dirs.map((d) => join(d, 'cgroup.procs')),
    limitHit() {
      if (memoryHit() > memoryBase) return `memory limit: ${Math.round(limits.memoryBytes / 1048576)} MB for the whole sandbox`;
      const tasks = tasksHit();
      if (tasks > tasksBase) { tasksBase = tasks; return `process limit: more than ${limits.tasks} tasks in the sandbox`; }
      return undefined;
    },
    killAll() {
      if (host.version === 2 && existsSync(join(memDir, 'cgroup.kill'))) { try { writeFileSync(join(memDir, 'cgroup.kill'), '1'); return; } catch { /* older kernel */ } }
      // Twice: a process forked while the first pass ran is caught by the second (the task limit bounds how many).
      for (let pass = 0; pass < 3; pass++) for (const pid of procs()) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    },
    async dispose() {
      for (let i = 0; i < 50; i++) {
        let left = 0;
        for (const d of dirs) {
          if (!existsSync(d)) continue;
          try { rmdirSync(d); } catch { left++; }
        }
        if (!left) return;
        this.killAll();
        await new Promise((r) => setTimeout(r, 20 * (i + 1)));
      }
    },
  };
}
