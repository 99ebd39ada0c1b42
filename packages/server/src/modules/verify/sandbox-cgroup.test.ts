/**
 * The cgroup v2 path, on a directory laid out like a delegated cgroup (this machine has cgroup v1 hierarchies,
 * where the real enforcement is proved by the escape suite): what is refused and why, the limits written, the
 * counters read as the reason a sandbox stopped, and the directory removed. The v1 path on the real hierarchies
 * when they are writable here.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandboxCgroup, detectCgroups } from './sandbox-cgroup.js';

const root = mkdtempSync(join(tmpdir(), 'codeloom-cgroup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function delegated(controllers: string): string {
  const dir = mkdtempSync(join(root, 'verify-'));
  writeFileSync(join(dir, 'cgroup.procs'), '');
  writeFileSync(join(dir, 'cgroup.subtree_control'), controllers);
  return dir;
}

describe('cgroups for the sandbox', () => {
  it('is off when asked, and says why a directory cannot be used', () => {
    expect(detectCgroups('off')).toEqual({ unavailable: expect.stringContaining('off') });
    expect(detectCgroups(join(root, 'missing'))).toEqual({ unavailable: expect.stringContaining('not a writable cgroup directory') });
    expect(detectCgroups(delegated('cpu memory\n'))).toEqual({ unavailable: expect.stringContaining('lacks pids') });
  });

  it('v2: a child per sandbox with memory.max and pids.max; the kernel\'s counters name the limit hit', async () => {
    const parent = delegated('cpu memory pids\n');
    const host = detectCgroups(parent);
    expect(host).toEqual({ version: 2, parents: { memory: parent, pids: parent } });
    if ('unavailable' in host) return;
    // The files a kernel would show in a new child, made by hand here.
    const made: string[] = [];
    const cg = createSandboxCgroupWithFiles(host, made);
    const dir = dirname(cg.procsFiles[0]!);
    expect(cg.procsFiles).toEqual([join(dir, 'cgroup.procs')]);
    expect(readFileSync(join(dir, 'memory.max'), 'utf8')).toBe(String(128 << 20));
    expect(readFileSync(join(dir, 'pids.max'), 'utf8')).toBe('20');
    expect(cg.limitHit()).toBeUndefined();
    writeFileSync(join(dir, 'pids.events'), 'max 3\n');
    expect(cg.limitHit()).toMatch(/process limit: more than 20 tasks/);
    expect(cg.limitHit()).toBeUndefined();
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n');
    expect(cg.limitHit()).toMatch(/memory limit: 128 MB/);
    for (const f of made) rmSync(join(dir, f), { force: true });
    await cg.dispose();
    expect(existsSync(dir)).toBe(false);
  });
});

/** createSandboxCgroup on a plain directory: the kernel's own files (cgroup.procs, the events) are made once it has made the child. */
function createSandboxCgroupWithFiles(host: Parameters<typeof createSandboxCgroup>[0], made: string[]) {
  const cg = createSandboxCgroup(host, { memoryBytes: 128 << 20, tasks: 20 });
  const dir = dirname(cg.procsFiles[0]!);
  for (const f of ['cgroup.procs', 'pids.events', 'memory.events', 'memory.max', 'memory.swap.max', 'pids.max']) {
    if (!existsSync(join(dir, f))) writeFileSync(join(dir, f), f.endsWith('events') ? 'max 0\n' : '');
    made.push(f);
  }
  return cg;
}

const v1 = detectCgroups('auto');
describe.skipIf('unavailable' in v1)('cgroup v1 on this machine', () => {
  it('makes a memory and a pids cgroup with the limits, and removes them', async () => {
    if ('unavailable' in v1) return;
    const cg = createSandboxCgroup(v1, { memoryBytes: 96 << 20, tasks: 16 });
    const [memory, pids] = cg.procsFiles.map((f) => dirname(f));
    expect(readFileSync(join(memory!, 'memory.limit_in_bytes'), 'utf8').trim()).toBe(String(96 << 20));
    expect(readFileSync(join(pids!, 'pids.max'), 'utf8').trim()).toBe('16');
    expect(cg.limitHit()).toBeUndefined();
    await cg.dispose();
    expect(existsSync(memory!)).toBe(false);
    expect(existsSync(pids!)).toBe(false);
  });
});
