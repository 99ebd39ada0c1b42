import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';

/** Whether a redis-server binary is on PATH (the fault tests start their own). */
export const HAVE_REDIS_SERVER = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address() as AddressInfo; s.close(() => resolve(port)); });
  });
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(String(d).startsWith('+PONG')));
  });
}

/**
 * A redis-server of the test's own, on its own port, keeping nothing on
 * disk: stopping it loses everything, as a crash of an unpersisted Redis
 * does. Never the shared one on 6379.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.start();
    return r;
  }

  get url() { return `redis://127.0.0.1:${this.port}`; }

  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      if (await answersPing(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on port ${this.port} did not start`);
  }

  /** Freezes it (SIGSTOP): connections stay open and nothing answers, like a hung server. */
  pause(): void { this.child?.kill('SIGSTOP'); }
  resume(): void { this.child?.kill('SIGCONT'); }

  /** Kills it (SIGKILL: no goodbye to the clients, nothing saved). */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.kill('SIGKILL'); });
  }
}
