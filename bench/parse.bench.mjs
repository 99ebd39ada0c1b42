// Parsing a model answer into files (issue 22 item 5: "Parsing a model answer takes time linear in its length").
// parseFencedFiles from the built server (packages/server/dist), on 1 MB and 2 MB answers of a realistic shape and
// of hostile ones, each measured in a worker of its own so that a parse that runs away is stopped at a deadline
// instead of holding the run. Prints CPU µs per KB at each size (the best of at least 5 parses, the sizes taken in
// turn: on a shared machine other work only ever adds time) and the ratio of the two times: about 2 when the time
// is linear in the length, about 4 when it is quadratic; "linear" says yes up to 3.
//   BENCH_PARSE_KB=1024,2048      answer sizes in KB (default 1024,2048; the ratio compares the first two)
//   BENCH_PARSE_DEADLINE=30       seconds one shape may take, all sizes, before its worker is stopped (default 30)
//   BENCH_PARSE_MODULE=<path>     another build of parse-fenced-files.js to measure (an older tree, for comparison)
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/** A realistic answer: prose, files named by heading, bold path, info string and first-line comment; `n` numbers the paths. */
function realisticUnit(n, eol) {
  return [
    `Here is version ${n} of the todo API, with a test and the package manifest.`,
    '',
    `### src/server-${n}.ts`,
    '```typescript',
    "import Fastify from 'fastify';",
    '',
    'export function buildServer() {',
    '  const app = Fastify({ logger: false });',
    '  const todos: { id: number; title: string; done: boolean }[] = [];',
    "  app.get('/todos', async () => todos);",
    "  app.post<{ Body: { title: string } }>('/todos', async (req, reply) => {",
    '    const todo = { id: todos.length + 1, title: req.body.title, done: false };',
    '    todos.push(todo);',
    '    return reply.code(201).send(todo);',
    '  });',
    '  return app;',
    '}',
    '```',
    '',
    `**\`test/server-${n}.test.ts\`**:`,
    '',
    '```ts',
    "import { expect, it } from 'vitest';",
    "import { buildServer } from '../src/server.js';",
    '',
    "it('creates a todo', async () => {",
    "  const res = await buildServer().inject({ method: 'POST', url: '/todos', payload: { title: 'x' } });",
    '  expect(res.statusCode).toBe(201);',
    '});',
    '```',
    '',
    '```json',
    `// file: package-${n}.json`,
    '{ "name": "todos", "type": "module", "scripts": { "test": "vitest run" } }',
    '```',
    '',
    `\`\`\`python scripts/seed_${n}.py`,
    'import json',
    'print(json.dumps([{"title": "first"}]))',
    '```',
    '',
    'Run `npm test` to check it.',
    '',
  ].join(eol);
}

function repeatTo(bytes, unit) {
  let out = '';
  for (let n = 0; out.length < bytes; n++) out += unit(n);
  return out;
}

const FENCE = '\n```ts\nA\n```\n';
/** Each shape builds an answer of about `b` characters (ASCII, so bytes). */
export const SHAPES = {
  'realistic answer': (b) => repeatTo(b, (n) => realisticUnit(n, '\n')),
  'realistic answer, CRLF': (b) => repeatTo(b, (n) => realisticUnit(n, '\r\n')),
  'blank line after a fence header': (b) => `\`\`\`ts\n${' '.repeat(b)}\n\`\`\``,
  '`// file: a.ts` + blank tail + `x`': (b) => `\`\`\`ts\n// file: a.ts${' '.repeat(b)}x\n\`\`\``,
  'line of `*` before a fence': (b) => `${'*'.repeat(b)}${FENCE}`,
  '`**` layers around a name before a fence': (b) => `${'**'.repeat(b / 4)}a.ts${'**'.repeat(b / 4)}${FENCE}`,
  'name + `:` run before a fence': (b) => `a.ts${':'.repeat(b)}${FENCE}`,
  'one line of backticks': (b) => '`'.repeat(b),
  'tildes + lone CR': (b) => `${'~'.repeat(b)}\r\r\nA`,
  'many fences (~12 B each)': (b) => '```ts\nA\n```\n'.repeat(Math.ceil(b / 12)),
  'main.ts…mainN.ts, then a nameless block': (b) => `${repeatTo(b, (n) => `\`\`\`ts main${n === 0 ? '' : n + 1}.ts\nA\n\`\`\`\n`)}\`\`\`ts\nB\n\`\`\`\n`,
  'unterminated fence over `````` lines': (b) => `\`\`\`\`ts\n${'```\n'.repeat(Math.ceil(b / 4))}`,
  'java block of blank lines': (b) => `\`\`\`java\n${'\n'.repeat(b)}x\n\`\`\``,
  'java block of alternating blank / `#` lines': (b) => `\`\`\`java\n${'\n#'.repeat(b / 2)}\n\`\`\``,
  'long info string (words)': (b) => `\`\`\`ts ${'src/a.ts '.repeat(Math.ceil(b / 9))}\nA\n\`\`\``,
  "long info-string name of `'` quotes": (b) => `\`\`\`ts title="x${"'".repeat(b)}x"\nA\n\`\`\``,
};

const cpuMicros = () => { const u = process.cpuUsage(); return u.user + u.system; };

/**
 * Parses answers of `shape` at each size, warmed up on a small one, then alternating between the sizes (so both see
 * the same machine) until each has had 5 parses and 500 ms. Each parse is timed in CPU µs of this process (the
 * worker's, since the main thread waits meanwhile) and reported as it ends; `started` says a size's first parse began.
 */
async function measure({ modulePath, shape, sizes }, report) {
  const { parseFencedFiles } = await import(pathToFileURL(modulePath).href);
  const small = SHAPES[shape](16 * 1024);
  for (let i = 0; i < 20; i++) parseFencedFiles(small, 'typescript');
  const answers = sizes.map((bytes) => SHAPES[shape](bytes));
  const spent = sizes.map(() => 0);
  for (let round = 0; round < 5 || spent.some((t) => t < 500_000); round++) {
    if (round === 50) break;
    answers.forEach((answer, k) => {
      if (round === 0) report({ started: k, length: answer.length });
      const t0 = cpuMicros();
      const files = parseFencedFiles(answer, 'typescript').length;
      const micros = cpuMicros() - t0;
      spent[k] += micros;
      report({ sample: k, micros, length: answer.length, files });
    });
  }
  report({ done: true });
}

/**
 * Runs `measure` in a worker and keeps the fewest µs per size. At the deadline the worker is stopped: a size with
 * samples keeps them; the size whose first parse was under way gets a lower bound (CPU µs spent since it began).
 */
function inWorker(task, deadlineSeconds) {
  return new Promise((resolve) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: task });
    const results = task.sizes.map(() => ({}));
    let inFlight;
    const finish = (extra = {}) => { clearTimeout(timer); void worker.terminate(); resolve({ results, ...extra }); };
    const timer = setTimeout(() => {
      if (inFlight) Object.assign(results[inFlight.k], { atLeast: cpuMicros() - inFlight.cpu, length: inFlight.length });
      finish({ stopped: true });
    }, deadlineSeconds * 1000);
    worker.on('message', (m) => {
      if (m.done) return finish();
      if (m.started !== undefined) return void (inFlight = { k: m.started, cpu: cpuMicros(), length: m.length });
      const r = results[m.sample];
      if (inFlight?.k === m.sample) inFlight = undefined;
      Object.assign(r, { micros: Math.min(r.micros ?? Infinity, m.micros), length: m.length, files: m.files, count: (r.count ?? 0) + 1 });
    });
    worker.once('error', (error) => finish({ error: error.message }));
  });
}

export async function benchParse({
  sizesKb = (process.env.BENCH_PARSE_KB ?? '1024,2048').split(',').map(Number),
  deadline = Number(process.env.BENCH_PARSE_DEADLINE ?? 30),
} = {}) {
  const { printTable, root } = await import('./lib.mjs');
  const modulePath = process.env.BENCH_PARSE_MODULE ?? join(root, 'packages/server/dist/modules/generate/parse-fenced-files.js');
  const label = (kb) => `${kb >= 1024 ? `${kb / 1024} MB` : `${kb} KB`}: µs/KB`;
  const rows = [];
  for (const shape of Object.keys(SHAPES)) {
    const { results, stopped, error } = await inWorker({ modulePath, shape, sizes: sizesKb.map((kb) => kb * 1024) }, deadline);
    const row = { shape, files: results[0].files ?? '—' };
    results.forEach((r, k) => {
      const perKb = (micros) => micros / (r.length / 1024);
      if (r.micros !== undefined) row[label(sizesKb[k])] = r.count > 1 ? Number(perKb(r.micros).toFixed(2)) : `${perKb(r.micros).toFixed(2)} (1 parse)`;
      else if (r.atLeast !== undefined) row[label(sizesKb[k])] = `> ${perKb(r.atLeast).toFixed(0)} (stopped)`;
      else row[label(sizesKb[k])] = error ? `threw: ${error.slice(0, 40)}` : stopped ? 'not reached' : '—';
    });
    if (results.length >= 2) {
      const ratio = results[1].micros / results[0].micros;
      row[`time ${sizesKb[1]}/${sizesKb[0]} KB`] = Number.isFinite(ratio) ? Number(ratio.toFixed(2)) : '—';
      row.linear = Number.isFinite(ratio) && ratio <= 3 ? 'yes' : 'NO';
    }
    rows.push(row);
  }
  const where = modulePath.includes('/packages/server/dist/') ? 'the built server' : modulePath;
  printTable(`Parsing an answer into files (parseFencedFiles from ${where}; CPU µs per KB, best parse of each size; deadline ${deadline} s a shape)`, rows);
}

if (!isMainThread) await measure(workerData, (m) => parentPort.postMessage(m));
