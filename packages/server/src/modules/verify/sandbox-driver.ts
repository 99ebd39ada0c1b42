/**
 * The program that runs INSIDE the sandbox (as `node -e`): it reads one job as JSON on stdin, writes the
 * files into the fresh tmpfs work directory, runs the checks one after another (each in its own process
 * group, under the rlimits, with its own wall time and output cap) and reports JSON lines on stdout:
 *   {"t":"start","check":i} {"t":"out","check":i,"text":"…"} {"t":"end","check":i,"exit_code":n,"duration_ms":n,"output":"tail","killed":reason?}
 *   {"t":"skip","check":i} when an earlier required check failed.
 * A watchdog counts the processes in the sandbox's pid namespace and kills every one above the limit
 * (RLIMIT_NPROC does not bind uid 0, which the sandbox maps to when the server runs as root).
 * It is serialised with Function.prototype.toString, so it uses nothing but Node's built-ins via require.
 */
export interface DriverJob {
  files: Array<{ path: string; content: string; mode?: number }>;
  checks: Array<{ name: string; argv: string[]; env?: Record<string, string>; optional?: boolean; shell?: boolean }>;
  limits: { checkTimeoutMs: number; outputLimit: number; outputTail: number; maxProcesses: number; cpuSeconds: number; memoryMb: number; fileMb: number };
}

/* eslint-disable */
export function sandboxDriver(): void {
  const fs = require('node:fs') as typeof import('node:fs');
  const path = require('node:path') as typeof import('node:path');
  const cp = require('node:child_process') as typeof import('node:child_process');
  const emit = (o: unknown) => { fs.writeSync(1, JSON.stringify(o) + '\n'); };
  const chunks: Buffer[] = [];
  let n = 0;
  const buf = Buffer.alloc(65536);
  for (;;) {
    let r = 0;
    try { r = fs.readSync(0, buf, 0, buf.length, null); } catch (e: any) { if (e.code === 'EAGAIN') continue; if (e.code === 'EOF') break; throw e; }
    if (r === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, r))); n += r;
  }
  const job = JSON.parse(Buffer.concat(chunks, n).toString('utf8')) as DriverJob;
  const root = process.cwd();
  for (const f of job.files) {
    const target = path.resolve(root, f.path);
    if (!target.startsWith(root + '/')) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, f.content, { mode: f.mode ?? 0o644 });
  }
  const L = job.limits;
  // Limits set by the shell for the check and everything it starts: CPU seconds, data segment (heap), file size, processes.
  const ulimit = `ulimit -S -t ${L.cpuSeconds}; ulimit -H -t ${L.cpuSeconds + 1}; ulimit -d ${L.memoryMb * 1024}; ulimit -f ${L.fileMb * 1024}; ulimit -u ${L.maxProcesses} 2>/dev/null; ulimit -c 0;`;
  const countProcesses = () => { try { return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length; } catch { return 0; } };

  let index = 0;
  let failed = false;
  const next = () => {
    if (index >= job.checks.length) { emit({ t: 'done' }); process.exit(0); }
    const i = index++;
    const check = job.checks[i]!;
    if (failed && !check.optional) { emit({ t: 'skip', check: i }); return next(); }
    emit({ t: 'start', check: i });
    const started = Date.now();
    const command = check.shell ? check.argv.join(' ') : 'exec "$@"';
    const child = cp.spawn(fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh', ['-c', `${ulimit} ${command}`, 'sh', ...(check.shell ? [] : check.argv)], {
      cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(check.env ?? {}) },
    });
    let tail = '';
    let seen = 0;
    let killed: string | undefined;
    const kill = (why: string) => {
      if (!killed) killed = why;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch {}
      // Whatever escaped the group (setsid, daemons): everything else in this pid namespace but us and its init.
      try { process.kill(-1, 'SIGKILL'); } catch {}
    };
    const onData = (d: Buffer) => {
      if (killed) return;
      seen += d.length;
      const text = d.toString('utf8');
      emit({ t: 'out', check: i, text: text.length > 4096 ? text.slice(-4096) : text });
      tail = (tail + text).slice(-L.outputTail);
      if (seen > L.outputLimit) kill(`output limit: more than ${L.outputLimit} bytes`);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const timer = setTimeout(() => kill(`time limit: ${L.checkTimeoutMs} ms`), L.checkTimeoutMs);
    const watchdog = setInterval(() => {
      // Our own node and the shell/bwrap init count too.
      if (countProcesses() > L.maxProcesses + 3) kill(`process limit: more than ${L.maxProcesses} processes`);
    }, 25);
    child.on('error', (e) => { tail += String(e); });
    // The check is over: what it left running in the background (and holding its pipes) goes too.
    child.on('exit', () => { try { process.kill(-1, 'SIGKILL'); } catch {} });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(watchdog);
      // Anything the check left running goes with it.
      try { process.kill(-child.pid!, 'SIGKILL'); } catch {}
      try { process.kill(-1, 'SIGKILL'); } catch {}
      if (!killed && signal === 'SIGXCPU') killed = `CPU limit: ${L.cpuSeconds} s`;
      if (!killed && signal === 'SIGXFSZ') killed = `file size limit: ${L.fileMb} MB`;
      if (!killed && signal) killed = `terminated by ${signal}`;
      const exit = code ?? 128 + (signal ? (require('node:os').constants.signals[signal] ?? 9) : 9);
      const output = killed ? `${tail}\n[stopped by the sandbox: ${killed}]` : tail;
      emit({ t: 'end', check: i, exit_code: killed && exit === 0 ? 137 : exit, duration_ms: Date.now() - started, output: output.slice(-L.outputTail), ...(killed ? { killed } : {}) });
      if (exit !== 0 || killed) { if (!check.optional) failed = true; }
      next();
    });
  };
  next();
}
