import type { GeneratedFile } from '@codeloom/protocol';
import { checkManifest, lockDroppedNote, refusalOutput } from './manifest-specifiers.js';
import { registryBase, startRegistryProxy, type RegistryProxyOptions } from './registry-proxy.js';
import { REGISTRY_RELAY_PORT, type CheckRun, type CheckSpec, type RunHooks, type SandboxFile, type SandboxRunner } from './sandbox-runner.js';

/** Whether a project's manifest names packages to install (JavaScript and TypeScript only). */
export function needsInstall(language: string, files: GeneratedFile[]): boolean {
  if (language !== 'typescript' && language !== 'javascript') return false;
  try {
    const pkg = JSON.parse(files.find((f) => f.path === 'package.json')?.content ?? '{}') as Record<string, Record<string, string> | undefined>;
    return Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).length > 0;
  } catch { return false; }
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

/** A planned install: the check that runs first, over the manifest alone, with npm's way out to the registry. */
export interface InstallPlan {
  check: CheckSpec;
  /** What is in the sandbox while npm runs: package.json and a lock file that was kept. */
  manifest: SandboxFile[];
  /** npm's settings in the sandbox (sandboxNpmEnv). */
  env: Record<string, string>;
  /** Put before the install's output (a lock file left out, and why). */
  note: string;
  /** The registry proxy's Unix socket, which the runner relays into the sandbox. */
  socketPath: string;
  close(): Promise<void>;
}

/**
 * Checks the manifest (only registry dependencies: anything else is refused before anything runs, naming each)
 * and starts the registry proxy (registry-proxy.ts) the install will reach the registry through.
 */
export async function planInstall(files: GeneratedFile[], registry: string, proxyOptions: RegistryProxyOptions = {}): Promise<{ refused: CheckRun } | InstallPlan> {
  const command = INSTALL_ARGV.join(' ');
  const manifest = checkManifest(files, registryBase(registry));
  if (manifest.refused.length) return { refused: { name: 'install', command, exit_code: 1, duration_ms: 0, output: refusalOutput(manifest.refused) } };
  const proxy = await startRegistryProxy(registry, proxyOptions);
  return {
    check: { name: 'install', argv: INSTALL_ARGV },
    manifest: manifest.files,
    env: sandboxNpmEnv(proxy.registryPath),
    note: manifest.lockDropped.length ? lockDroppedNote(manifest.lockDropped) : '',
    socketPath: proxy.socketPath,
    close: () => proxy.close(),
  };
}

/**
 * `npm install --ignore-scripts` as the first check of the same sandbox as the checks: without network, with only
 * the manifest in the work directory, no install script run, and nothing but the configured registry reachable
 * (the proxy's socket, relayed to 127.0.0.1:REGISTRY_RELAY_PORT inside). When it ends the relay closes and the
 * other files are written; the packages stay in the sandbox's own sized tmpfs, so nothing lands on the host.
 * Check i of `checks` is check i + 1 of the run (and of `onStart`/`onOutput`). The proxy is closed at the end.
 */
export async function runWithInstall(runner: SandboxRunner, plan: InstallPlan, files: GeneratedFile[], checks: CheckSpec[], hooks: RunHooks): Promise<{ checks: CheckRun[]; timedOut: boolean }> {
  const first = new Set(plan.manifest.map((f) => f.path));
  try {
    if (plan.note) hooks.onOutput?.(0, plan.note);
    const run = await runner.run(plan.manifest, [plan.check, ...checks], {
      ...hooks, registrySocket: plan.socketPath, env: { ...hooks.env, ...plan.env }, later: { afterCheck: 0, files: files.filter((f) => !first.has(f.path)) },
    });
    const install = run.checks[0]!;
    if (plan.note) install.output = `${plan.note}${install.output}`;
    return run;
  } finally {
    await plan.close();
  }
}
