// npm start: build if needed, then serve (SQLite and the sandbox model unless configured otherwise).
import { buildIfNeeded } from './build-if-needed.mjs';

buildIfNeeded();
const { serve } = await import('../packages/server/dist/main.js');
await serve();
