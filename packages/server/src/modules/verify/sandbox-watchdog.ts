import { readdir, readFile } from 'node:fs/promises';

/**
 * Where no cgroup can be had: the server itself watches the sandbox's process tree from outside (the host's
 * /proc), so nothing inside can pause it. Every tick it finds the descendants of the sandbox's first
 * process, counts them and adds up their resident memory (anonymous, file and shared pages mapped); past
 * a limit it calls `onLimit` once. A fork bomb can outrun a tick by a few milliseconds; the per-process
 * rlimits and the tmpfs sizes bound what it can do meanwhile.
 */
export interface WatchdogLimits { processes: number; memoryBytes: number; intervalMs?: number }

const PAGE = 4096;

async function stat(pid: string): Promise<{ ppid: number; rss: number } | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may hold spaces and parentheses: the fields after it start past the last ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(rest[1]), rss: Number(rest[21]) * PAGE };
  } catch { return undefined; }
}

/** The descendants of `root` (itself included): their count and resident bytes. */
export async function measureTree(root: number): Promise<{ processes: number; rssBytes: number }> {
  const pids = (await readdir('/proc')).filter((d) => d.charCodeAt(0) >= 48 && d.charCodeAt(0) <= 57);
  const stats = await Promise.all(pids.map(async (p) => [Number(p), await stat(p)] as const));
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const [pid, s] of stats) {
    if (!s) continue;
    rss.set(pid, s.rss);
    const list = children.get(s.ppid);
    if (list) list.push(pid); else children.set(s.ppid, [pid]);
  }
  let processes = 0;
  let rssBytes = 0;
  const stack = rss.has(root) ? [root] : [];
  while (stack.length) {
    const pid = stack.pop()!;
    processes++;
    rssBytes += rss.get(pid) ?? 0;
    for (const c of children.get(pid) ?? []) stack.push(c);
  }
  return { processes, rssBytes };
}

export function startWatchdog(root: number, limits: WatchdogLimits, onLimit: (why: string) => void): () => void {
  let stopped = false;
  let busy = false;
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    void measureTree(root).then(({ processes, rssBytes }) => {
      if (stopped) return;
      if (processes > limits.processes) { stopped = true; onLimit(`process limit: more than ${limits.processes} processes in the sandbox`); }
      else if (rssBytes > limits.memoryBytes) { stopped = true; onLimit(`memory limit: ${Math.round(limits.memoryBytes / 1048576)} MB for the whole sandbox`); }
    }).catch(() => { /* /proc unreadable: the rlimits still hold */ }).finally(() => { busy = false; });
  }, limits.intervalMs ?? 50);
  timer.unref();
  return () => { stopped = true; clearInterval(timer); };
}
