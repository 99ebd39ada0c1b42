// npm start: build if needed, then serve (SQLite and the sandbox model unless configured otherwise).
// The server runs with the heap flags of heap-flags.mjs: node is started again with them unless they were
// given already (NODE_OPTIONS cannot carry --min-semi-space-size).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { buildIfNeeded } from './build-if-needed.mjs';
import { HEAP_FLAGS } from './heap-flags.mjs';

const given = (flag) => process.execArgv.some((arg) => arg.split('=')[0] === flag.split('=')[0]);
const missing = HEAP_FLAGS.filter((flag) => !given(flag));

if (missing.length) {
  const child = spawn(process.execPath, [...missing, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  // The server drains on SIGTERM/SIGINT (a second one is ignored, so a terminal's Ctrl-C reaching both is fine).
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 1)));
} else {
  buildIfNeeded();
  const { serve } = await import('../packages/server/dist/main.js');
  await serve();
}
