import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GeneratedFile } from '@codeloom/protocol';
import { checkManifest, lockDroppedNote, refusalOutput } from './manifest-specifiers.js';
import { registryBase, startRegistryProxy, type RegistryProxyOptions } from './registry-proxy.js';
import { REGISTRY_RELAY_PORT, type CheckRun, type RunHooks, type SandboxLimits, type SandboxRunner } from './sandbox-runner.js';

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

export const INSTALL_ARGV = ['npm', 'install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'];

/**
 * npm's settings inside the install sandbox: the registry is the relay (with the real registry's path, see
 * registry-proxy.ts), tarball URLs of packuments and lock files are rewritten to it (`replace-registry-host`),
 * and no npmrc of the host (the global one under /usr is visible read-only) can add a proxy, another
 * registry, scoped registries or credentials.
 */
export function sandboxNpmEnv(registryPath: string, port = REGISTRY_RELAY_PORT): Record<string, string> {
  return {
    npm_config_registry: `http://127.0.0.1:${port}${registryPath}`,
    npm_config_replace_registry_host: 'always',
    npm_config_userconfig: '/dev/null',
    npm_config_globalconfig: '/dev/null/npmrc',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    // One retry, soon: the proxy's refusals are final, and the sandbox's wall clock bounds the rest.
    npm_config_fetch_retries: '1',
    npm_config_fetch_retry_mintimeout: '1000',
    npm_config_fetch_retry_maxtimeout: '5000',
  };
}

/**
 * `npm install --ignore-scripts` in its own sandbox without network: only package.json (and a lock file) is
 * in it, no install script runs, nothing the model wrote executes, and npm reaches nothing but the configured
 * registry, through the registry proxy (registry-proxy.ts) on a Unix socket that the runner relays to
 * 127.0.0.1:REGISTRY_RELAY_PORT inside. Before anything runs, every dependency specifier must be a registry
 * one (manifest-specifiers.ts): otherwise the install check fails at once, naming each, and nothing is
 * installed. The packages land in a host temporary directory that the checks' sandbox mounts read-only.
 */
export async function installDependencies(
  runner: SandboxRunner, files: GeneratedFile[], registry: string, limits: SandboxLimits,
  hooks: Pick<RunHooks, 'signal' | 'onOutput'>, proxyOptions: RegistryProxyOptions = {},
): Promise<Installed> {
  const command = INSTALL_ARGV.join(' ');
  const manifest = checkManifest(files, registryBase(registry));
  if (manifest.refused.length) {
    const output = refusalOutput(manifest.refused);
    hooks.onOutput?.(0, output);
    return { check: { name: 'install', command, exit_code: 1, duration_ms: 0, output }, mounts: [], dispose: () => undefined };
  }
  const note = manifest.lockDropped.length ? lockDroppedNote(manifest.lockDropped) : '';
  if (note) hooks.onOutput?.(0, note);

  const dir = mkdtempSync(join(tmpdir(), 'codeloom-install-'));
  const dispose = () => rmSync(dir, { recursive: true, force: true });
  try {
    const proxy = await startRegistryProxy(registry, proxyOptions);
    try {
      const runHooks: RunHooks = { ...hooks, limits, registrySocket: proxy.socketPath, workDir: dir, env: sandboxNpmEnv(proxy.registryPath) };
      const { checks } = await runner.run(manifest.files, [{ name: 'install', argv: INSTALL_ARGV }], runHooks);
      const check = checks[0]!;
      if (note) check.output = `${note}${check.output}`;
      const modules = join(dir, 'node_modules');
      return { check, mounts: existsSync(modules) ? [[modules, 'node_modules']] : [], dispose };
    } finally {
      await proxy.close();
    }
  } catch (error) {
    dispose();
    throw error;
  }
}
