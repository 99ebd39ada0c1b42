// npm run --silent cli -- <command>: build if needed, then run the codeloom command.
// Without --silent npm prints its "> cli" banner on standard output before this
// script starts, so --json output would not be clean JSON: say so on stderr.
import { buildIfNeeded, root } from './build-if-needed.mjs';

if (process.env.npm_lifecycle_event === 'cli' && process.argv.includes('--json') && !['silent', 'error', 'warn'].includes(process.env.npm_config_loglevel ?? '')) {
  process.stderr.write('codeloom: npm printed its banner on standard output: use `npm run --silent cli -- …` for clean --json output\n');
}
buildIfNeeded();
// npm runs a script in the package's folder; INIT_CWD is where `npm run` was typed. Client commands run there (or
// where `node scripts/cli.mjs` was started), so `--out ./todos` (and any relative path) means what it says; server
// commands run in the checkout, whose ./data is the server's default database folder, wherever they are typed.
const SERVER_SIDE = new Set(['serve', 'migrate', 'admin', 'eval']);
const command = process.argv.slice(2).find((a) => !a.startsWith('-'));
if (SERVER_SIDE.has(command ?? '')) process.chdir(root);
else if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);
await import('../packages/cli/dist/main.js');
