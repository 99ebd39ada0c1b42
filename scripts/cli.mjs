// npm run --silent cli -- <command>: build if needed, then run the codeloom command.
// Without --silent npm prints its "> cli" banner on standard output before this
// script starts, so --json output would not be clean JSON: say so on stderr.
import { buildIfNeeded } from './build-if-needed.mjs';

if (process.env.npm_lifecycle_event === 'cli' && process.argv.includes('--json') && !['silent', 'error', 'warn'].includes(process.env.npm_config_loglevel ?? '')) {
  process.stderr.write('codeloom: npm printed its banner on standard output: use `npm run --silent cli -- …` for clean --json output\n');
}
buildIfNeeded();
await import('../packages/cli/dist/main.js');
