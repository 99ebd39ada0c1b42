// npm run cli -- <command>: build if needed, then run the codeloom command.
import { buildIfNeeded } from './build-if-needed.mjs';

buildIfNeeded();
await import('../packages/cli/dist/main.js');
