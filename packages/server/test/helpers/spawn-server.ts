import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SERVER_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface SpawnedServer {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts the built server (`npm test` builds it first) as its own process, on a free port. */
export async function spawnServer(env: Record<string, string>): Promise<SpawnedServer> {
  if (!existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing: run npm test (it builds first) or npm run build`);
  const child = spawn(process.execPath, [SERVER_MAIN], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', CODELOOM_ARGON2_MEMORY_KIB: '1024', CODELOOM_TRUST_PROXY: 'true', CODELOOM_ISSUER: 'http://codeloom.test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 20_000);
    const onData = () => {
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m) { clearTimeout(timer); child.stdout!.off('data', onData); resolve(m[1]!); }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited with ${code}:\n${out}`)); });
  });
  return {
    url,
    child,
    output: () => out,
    stop: (signal = 'SIGTERM') => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill(signal);
    }),
  };
}
