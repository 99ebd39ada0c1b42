import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GeneratedFile } from '@codeloom/protocol';
import type { CheckRun, RunHooks, SandboxLimits, SandboxRunner } from './sandbox-runner.js';

/** Whether a project's manifest names packages to install (JavaScript and TypeScript only). */
export function needsInstall(language: string, files: GeneratedFile[]): boolean {
  if (language !== 'typescript' && language !== 'javascript') return false;
  try {
    const pkg = JSON.parse(files.find((f) => f.path === 'package.json')?.content ?? '{}') as Record<string, Record<string, string> | undefined>;
    return Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).length > 0;
  } catch { return false; }
}

export interface Installed {
  check: CheckRun;
  /** Bound read-only at the work directory's node_modules for the checks; call `dispose` when done. */
  mounts: Array<[string, string]>;
  dispose(): void;
}

/**
 * `npm install --ignore-scripts` in its own sandbox that may reach the registry: only package.json (and a
 * lock file) is in it, no install script runs, and nothing the model wrote executes. The packages land in a
 * host temporary directory that the checks' sandbox mounts read-only.
 */
export async function installDependencies(runner: SandboxRunner, files: GeneratedFile[], registry: string, limits: SandboxLimits, hooks: Pick<RunHooks, 'signal' | 'onOutput'>): Promise<Installed> {
  const dir = mkdtempSync(join(tmpdir(), 'codeloom-install-'));
  const dispose = () => rmSync(dir, { recursive: true, force: true });
  try {
    const manifest = files.filter((f) => f.path === 'package.json' || f.path === 'package-lock.json');
    const { checks } = await runner.run(manifest, [{ name: 'install', argv: ['npm', 'install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'] }], {
      ...hooks, limits, network: true, workDir: dir, env: { npm_config_registry: registry },
    });
    const modules = join(dir, 'node_modules');
    return { check: checks[0]!, mounts: existsSync(modules) ? [[modules, 'node_modules']] : [], dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}
