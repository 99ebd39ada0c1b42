/**
 * The program that runs in the sandbox's OUTER layer (as `node -e`), where no code under verification ever
 * runs: it reads one job as JSON on stdin, writes the files into the work directory, then runs each check
 * in an INNER bubblewrap of its own (a new pid namespace that cannot see this driver, a new user namespace
 * that cannot make more, the seccomp filter, no capabilities, only fds 0–2) and reports JSON lines on its
 * stdout, which only the server reads:
 *   {"t":"start","check":i} {"t":"out","check":i,"text":"…"} {"t":"end","check":i,"exit_code":n,"duration_ms":n,"output":"tail","killed":reason?}
 *   {"t":"skip","check":i} when an earlier required check failed; {"t":"files","error":"…"} when the files cannot be written.
 * The checks' processes, memory and disk are bounded from outside (cgroups or the server's watchdog, tmpfs
 * sizes); the driver bounds each check's wall time and output. With `registry`, it relays TCP connections to
 * 127.0.0.1:port inside the sandbox's network namespace to the server's registry proxy (a Unix socket).
 * It is serialised with Function.prototype.toString, so it uses nothing but Node's built-ins via require.
 */
export interface DriverJob {
  files: Array<{ path: string; content: string; mode?: number }>;
  checks: Array<{ name: string; argv: string[]; env?: Record<string, string>; optional?: boolean; shell?: boolean }>;
  limits: { checkTimeoutMs: number; outputLimit: number; outputTail: number; maxProcesses: number; cpuSeconds: number; memoryMb: number; fileMb: number };
  /** Where the files go (the outer layer's view of the work directory). */
  work: string;
  /** The inner bwrap: its binary and arguments, up to the command. */
  inner: string[];
  /** A file holding the seccomp program, handed to the inner bwrap as fd 3. */
  seccompFile?: string;
  registry?: { port: number; socket: string };
  /** Written once check `afterCheck` has ended, when the registry relay closes (the install phase runs with the manifest alone). */
  later?: { afterCheck: number; files: Array<{ path: string; content: string; mode?: number }> };
  /**
   * After the last check, report the work directory's regular UTF-8 files back (the engineer's `run`):
   * {"t":"file","path":"…","content":"…"} each, then {"t":"collected","skipped":[…],"truncated":bool}.
   * Symlinks, devices and FIFOs are never followed or read; `node_modules` and `.git` are left out.
   */
  collect?: { maxFiles: number; maxFileBytes: number; maxBytes: number };
}

/* eslint-disable */
export function sandboxDriver(): void {
  const fs = require('node:fs') as typeof import('node:fs');
  const path = require('node:path') as typeof import('node:path');
  const cp = require('node:child_process') as typeof import('node:child_process');
  const net = require('node:net') as typeof import('node:net');
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
  const root = job.work;
  const why: Record<string, string> = { EEXIST: 'a file is in the way of a directory', ENOTDIR: 'a file is in the way of a directory', EISDIR: 'a directory has that name', ENOSPC: 'the disk limit was reached', EFBIG: 'the file is too large', ENAMETOOLONG: 'the name is too long', EACCES: 'not allowed', EINVAL: 'not a valid name' };
  const writeFiles = (files: DriverJob['files']) => {
    for (const f of files) {
      const target = path.resolve(root, f.path);
      if (!target.startsWith(root + '/')) continue;
      try {
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.writeFileSync(target, f.content, { mode: f.mode ?? 0o644 });
      } catch (e: any) {
        emit({ t: 'files', error: `the file ${JSON.stringify(f.path)} could not be written: ${why[e && e.code] || 'the file system refused it'}` });
        process.exit(0);
      }
    }
  };
  writeFiles(job.files);
  const collect = (c: NonNullable<DriverJob['collect']>) => {
    const skipped: string[] = [];
    let files = 0;
    let bytes = 0;
    let truncated = false;
    // A skipped file is kept as it was by the server: past 50 of them the report says it is incomplete.
    const skip = (why: string) => { if (skipped.length < 50) skipped.push(why); else truncated = true; };
    const walk = (dir: string, rel: string): void => {
      let names: string[] = [];
      try { names = fs.readdirSync(dir).sort(); } catch { return; }
      for (const name of names) {
        const p = rel ? rel + '/' + name : name;
        const full = dir + '/' + name;
        let st: import('node:fs').Stats;
        try { st = fs.lstatSync(full); } catch { continue; }
        if (st.isDirectory()) { if (name !== 'node_modules' && name !== '.git') walk(full, p); continue; }
        if (!st.isFile()) { skip(p + ' (not a regular file)'); continue; }
        if (files >= c.maxFiles || bytes + st.size > c.maxBytes) { truncated = true; continue; }
        if (st.size > c.maxFileBytes) { skip(p + ' (over ' + c.maxFileBytes + ' bytes)'); continue; }
        let buf: Buffer;
        // O_NOFOLLOW: a file swapped for a link since the lstat is not followed.
        try { const fd = fs.openSync(full, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK); try { buf = fs.readFileSync(fd); } finally { fs.closeSync(fd); } } catch { continue; }
        const text = buf.toString('utf8');
        if (!Buffer.from(text, 'utf8').equals(buf) || text.includes('\u0000')) { skip(p + ' (binary)'); continue; }
        const line = JSON.stringify({ t: 'file', path: p, content: text });
        if (Buffer.byteLength(line) > 250_000) { skip(p + ' (too large to report)'); continue; }
        files++; bytes += buf.length;
        fs.writeSync(1, line + '\n');
      }
    };
    walk(root, '');
    emit({ t: 'collected', skipped, truncated });
  };
  let closeRelay = () => {};
  const L = job.limits;
  // Per-process limits set by the shell for the check and everything it starts: CPU seconds, data segment, file size, processes, no core files.
  const ulimit = `ulimit -S -t ${L.cpuSeconds}; ulimit -H -t ${L.cpuSeconds + 1}; ulimit -d ${L.memoryMb * 1024}; ulimit -f ${L.fileMb * 1024}; ulimit -u ${L.maxProcesses} 2>/dev/null; ulimit -c 0;`;
  const shell = fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

  const run = () => {
    let index = 0;
    let failed = false;
    const next = (): void => {
      if (index >= job.checks.length) { if (job.collect) collect(job.collect); emit({ t: 'done' }); process.exit(0); }
      const i = index++;
      const check = job.checks[i]!;
      if (failed && !check.optional) { emit({ t: 'skip', check: i }); return next(); }
      emit({ t: 'start', check: i });
      const started = Date.now();
      const command = check.shell ? check.argv.join(' ') : 'exec "$@"';
      const setenv = Object.entries(check.env ?? {}).flatMap(([k, v]) => ['--setenv', k, v]);
      const seccomp = job.seccompFile ? fs.openSync(job.seccompFile, 'r') : undefined;
      const argv = [...job.inner.slice(1), ...setenv, ...(seccomp !== undefined ? ['--seccomp', '3'] : []), '--', shell, '-c', `${ulimit} ${command}`, 'sh', ...(check.shell ? [] : check.argv)];
      const child = cp.spawn(job.inner[0]!, argv, { stdio: ['ignore', 'pipe', 'pipe', ...(seccomp !== undefined ? [seccomp] : [])] });
      if (seccomp !== undefined) fs.closeSync(seccomp);
      let tail = '';
      let seen = 0;
      let killed: string | undefined;
      // The inner bwrap dies with its pid namespace: killing it ends everything the check started.
      const kill = (reason: string) => { if (!killed) killed = reason; try { child.kill('SIGKILL'); } catch {} };
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
      child.on('error', (e) => { tail += String(e.message); });
      // bwrap ended but something it started still holds the pipes (a setup that failed half-way): stop waiting for them.
      child.on('exit', () => { setTimeout(() => { child.stdout!.destroy(); child.stderr!.destroy(); }, 2000).unref(); });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        // bwrap passes a signal that ended the command on as 128 + its number.
        const sig = signal ? (require('node:os').constants.signals[signal] ?? 9) : code !== null && code > 128 && code < 160 ? code - 128 : 0;
        if (!killed && sig === 24) killed = `CPU limit: ${L.cpuSeconds} s`;
        if (!killed && sig === 25) killed = `file size limit: ${L.fileMb} MB`;
        if (!killed && signal) killed = `terminated by ${signal}`;
        const exit = code ?? 128 + sig;
        const output = killed ? `${tail}\n[stopped by the sandbox: ${killed}]` : tail;
        emit({ t: 'end', check: i, exit_code: killed && exit === 0 ? 137 : exit, duration_ms: Date.now() - started, output: output.slice(-L.outputTail), ...(killed ? { killed } : {}) });
        if (exit !== 0 || killed) { if (!check.optional) failed = true; }
        if (job.later && i === job.later.afterCheck) { closeRelay(); writeFiles(job.later.files); }
        next();
      });
    };
    next();
  };

  if (job.registry) {
    const registry = job.registry;
    const open = new Set<import('node:net').Socket>();
    const relay = net.createServer((inside) => {
      const outside = net.connect(registry.socket);
      const end = () => { inside.destroy(); outside.destroy(); open.delete(inside); };
      open.add(inside);
      inside.on('error', end); outside.on('error', end); inside.on('close', end);
      inside.pipe(outside).pipe(inside);
    });
    closeRelay = () => { relay.close(); for (const socket of open) socket.destroy(); };
    relay.on('error', (e) => { emit({ t: 'files', error: `the registry relay could not start: ${e.message}` }); process.exit(0); });
    relay.listen(registry.port, '127.0.0.1', run);
  } else {
    run();
  }
}
