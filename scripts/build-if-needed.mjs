import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * `tsc -b` is incremental: it rebuilds only what changed, and is quick when nothing did. packages/cli's project
 * references pull in every package it runs on: protocol, sandbox-model, server and client.
 */
export function buildIfNeeded() {
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  // tsc's messages go to stderr: standard output belongs to the command run after the build (`npm run --silent cli -- … --json`).
  const result = spawnSync(process.execPath, [tsc, '-b', 'packages/cli'], { cwd: root, stdio: ['inherit', 2, 'inherit'] });
  if (result.status !== 0) {
    process.stderr.write('Build failed.\n');
    process.exit(result.status ?? 1);
  }
  // The SDK's CommonJS flavour (packages/client/dist/index.cjs, esbuild; a few dozen milliseconds).
  const cjs = spawnSync(process.execPath, [fileURLToPath(new URL('../packages/client/build-cjs.mjs', import.meta.url))], { cwd: root, stdio: ['inherit', 2, 'inherit'] });
  if (cjs.status !== 0) {
    process.stderr.write('SDK CommonJS build failed.\n');
    process.exit(cjs.status ?? 1);
  }
  // The dashboard's static assets (esbuild; skipped when nothing in packages/web or the SDK changed).
  const web = spawnSync(process.execPath, [fileURLToPath(new URL('../packages/web/build.mjs', import.meta.url)), '--if-needed'], { cwd: root, stdio: ['inherit', 2, 'inherit'] });
  if (web.status !== 0) {
    process.stderr.write('Dashboard build failed.\n');
    process.exit(web.status ?? 1);
  }
}
