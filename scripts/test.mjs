// npm test: build once (the multi-process tests start the built server), run every
// suite with vitest, say which suites were skipped and why, and end with a plain
// "N passed, N failed, N skipped" line.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildIfNeeded, root } from './build-if-needed.mjs';

buildIfNeeded();

const skipped = [];
if (!process.env.TEST_DATABASE_URL) skipped.push('PostgreSQL suites (storage conformance, PostgreSQL end-to-end, two-instance limits): TEST_DATABASE_URL is not set');
if (!process.env.TEST_REDIS_URL) skipped.push('Redis suites (Redis rate limits, two-instance limits): TEST_REDIS_URL is not set');
for (const line of skipped) console.log(`skipping ${line}`);

const outDir = join(root, '.test-output');
mkdirSync(outDir, { recursive: true });
const report = join(outDir, 'vitest.json');
const vitest = join(root, 'node_modules/vitest/vitest.mjs');
const result = spawnSync(process.execPath, [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });

try {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const skippedTests = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  for (const line of skipped) console.log(`skipped: ${line}`);
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skippedTests} skipped`);
} catch {
  console.log('tests: no report was written');
}
process.exit(result.status ?? 1);
