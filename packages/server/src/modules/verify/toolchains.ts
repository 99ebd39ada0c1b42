import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';

/** Where the server's own node_modules (the TypeScript compiler, tsx, vitest, @types/node…) appear inside the sandbox. */
export const SANDBOX_NODE_MODULES = '/sandbox/node_modules';
/** The fresh tmpfs work directory the files are written into. */
export const SANDBOX_WORK = '/sandbox/work';

export type Tool = 'node' | 'npm' | 'tsc' | 'tsx' | 'vitest' | 'python' | 'pytest' | 'javac' | 'gcc' | 'gpp' | 'make' | 'cmake' | 'cargo' | 'rustc' | 'go' | 'bash';

/** The toolchains on this machine and how the sandbox sees them: read-only mounts at the same paths, PATH and environment. */
export interface Toolchains {
  have: Record<Tool, boolean>;
  /** Host directories bound read-only at the same path inside (beyond /usr, which is always bound). */
  mounts: string[];
  /** Host node_modules bound read-only at SANDBOX_NODE_MODULES, when found. */
  nodeModules: string | undefined;
  path: string[];
  env: Record<string, string>;
}

const exec = promisify(execFile);

async function run(cmd: string, args: string[]): Promise<string | undefined> {
  try { return (await exec(cmd, args, { encoding: 'utf8', timeout: 10_000 })).stdout.trim(); } catch { return undefined; }
}

async function which(tool: string): Promise<string | undefined> {
  const out = await run('/bin/sh', ['-c', `command -v ${tool}`]);
  return out?.startsWith('/') ? realpathSync(out) : undefined;
}

/** The node_modules holding the server's TypeScript compiler (the monorepo's root one in a checkout). */
function serverNodeModules(): string | undefined {
  try {
    const ts = createRequire(import.meta.url).resolve('typescript/package.json');
    return dirname(dirname(ts));
  } catch { return undefined; }
}

const underUsr = (p: string) => p === '/usr' || p.startsWith('/usr/') || p.startsWith('/bin/') || p.startsWith('/lib');

/** Looks the toolchains up once (a few `command -v` calls). `extra`: more host directories to mount and put on PATH. */
export async function detectToolchains(options: { nodeModules?: string | undefined; extraPaths?: readonly string[] } = {}): Promise<Toolchains> {
  // Every lookup at once (a few child processes; nothing blocks the event loop).
  const names = ['npm', 'python3', 'cargo', 'rustc', 'go', 'javac', 'java', 'gcc', 'g++', 'make', 'cmake', 'bash'] as const;
  const found = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await which(n)] as const))) as Record<(typeof names)[number], string | undefined>;
  const mounts = new Set<string>();
  const path: string[] = [];
  const env: Record<string, string> = {};
  const addRoot = (dir: string, bin?: string) => { if (underUsr(dir)) return; mounts.add(dir); if (bin && !path.includes(bin)) path.push(bin); };

  // node: the server's own interpreter.
  const nodeBin = dirname(realpathSync(process.execPath));
  addRoot(dirname(nodeBin), nodeBin);
  const npm = found['npm'];
  if (npm && !underUsr(npm)) addRoot(dirname(dirname(dirname(npm))));

  // Python: the real interpreter behind any shim (pyenv), with its own prefix.
  let python = false;
  let pytest = false;
  const py = found['python3'];
  const info = py ? await run(py, ['-c', 'import sys; print(sys.executable); print(sys.base_prefix)']) : undefined;
  if (info) {
    const [exe, prefix] = info.split('\n');
    if (exe && prefix && existsSync(exe)) {
      addRoot(prefix, dirname(exe));
      python = true;
      pytest = (await run(exe, ['-c', 'import pytest'])) !== undefined;
    }
  }

  // Rust: rustup's proxies need RUSTUP_HOME; CARGO_HOME is pointed at a writable tmpfs inside.
  const cargo = found['cargo'];
  if (cargo) {
    // Only the binaries: CARGO_HOME also holds credentials.toml and the registry cache, which the sandbox never needs (CARGO_HOME is a tmpfs inside).
    const cargoBin = dirname(cargo);
    addRoot(cargoBin, cargoBin);
    const rustupHome = process.env.RUSTUP_HOME ?? join(homedir(), '.rustup');
    if (existsSync(rustupHome)) { mounts.add(rustupHome); env.RUSTUP_HOME = rustupHome; }
  }
  const rustc = found['rustc'];

  // Go: its GOROOT.
  const go = found['go'];
  if (go) {
    const goroot = await run(go, ['env', 'GOROOT']);
    if (goroot) addRoot(goroot, join(goroot, 'bin'));
  }

  for (const dir of options.extraPaths ?? []) addRoot(dir, dir);

  const nodeModules = options.nodeModules ?? serverNodeModules();
  const hasModule = (name: string) => !!nodeModules && existsSync(join(nodeModules, name, 'package.json'));
  for (const bin of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']) if (!path.includes(bin)) path.push(bin);
  if (nodeModules) path.push(join(SANDBOX_NODE_MODULES, '.bin'));

  const javac = found['javac'];
  return {
    have: {
      node: true, npm: !!npm, tsc: hasModule('typescript'), tsx: hasModule('tsx'), vitest: hasModule('vitest'),
      python, pytest, javac: !!javac && !!found['java'], gcc: !!found['gcc'], gpp: !!found['g++'], make: !!found['make'], cmake: !!found['cmake'],
      cargo: !!cargo && !!rustc, rustc: !!rustc, go: !!go, bash: !!found['bash'],
    },
    mounts: [...mounts].filter((m) => existsSync(m)),
    nodeModules: nodeModules && existsSync(nodeModules) ? nodeModules : undefined,
    path,
    env,
  };
}
