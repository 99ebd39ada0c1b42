import { jsonFile, NODE_GITIGNORE, type ProjectTemplate } from './project-template.js';

const README = `# wordcount

A dependency-free Node command-line tool that counts lines, words and
characters, like \`wc\`. Arguments are parsed with \`node:util\` \`parseArgs\`.

## Use

\`\`\`sh
echo "hello world" | node bin/wordcount.js        # 1 2 12
node bin/wordcount.js README.md package.json      # one line per file, then a total
node bin/wordcount.js --json README.md
node bin/wordcount.js --help
\`\`\`

\`npm link\` (or \`npm install -g .\`) puts \`wordcount\` on your PATH.

## Develop

\`\`\`sh
npm test
\`\`\`

## Layout

- \`bin/wordcount.js\`: the command (argument parsing, I/O, exit codes).
- \`src/count.js\`: the counting logic, free of I/O so it is easy to test.
- \`test/\`: tests run by \`node --test\`, including the command end to end.
`;

const COUNT = `/** Lines, words and characters of a text, counted as wc counts them (a line ends with a newline). */
export function count(text) {
  const lines = (text.match(/\\n/g) ?? []).length;
  const words = text.split(/\\s+/).filter(Boolean).length;
  // Spread so that characters outside the BMP (emoji) count once, not as two UTF-16 units.
  return { lines, words, chars: [...text].length };
}

export function total(counts) {
  return counts.reduce((sum, c) => ({ lines: sum.lines + c.lines, words: sum.words + c.words, chars: sum.chars + c.chars }), { lines: 0, words: 0, chars: 0 });
}
`;

const BIN = `#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { count, total } from '../src/count.js';

const USAGE = \`usage: wordcount [--json] [file...]

Counts lines, words and characters of each file, or of standard input.

  --json      print JSON instead of columns
  -h, --help  show this help\`;

// exitCode rather than process.exit(), which can cut off output still queued for a pipe.
process.exitCode = main(process.argv.slice(2));

function main(argv) {
  let args;
  try {
    args = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    console.error(\`wordcount: \${err.message}\\n\\n\${USAGE}\`);
    return 2;
  }
  const { values, positionals } = args;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }

  const results = [];
  let failed = false;
  for (const file of positionals.length > 0 ? positionals : [null]) {
    try {
      results.push({ file, ...count(readFileSync(file ?? 0, 'utf8')) });
    } catch (err) {
      console.error(\`wordcount: \${file}: \${err.code === 'ENOENT' ? 'no such file' : err.message}\`);
      failed = true;
    }
  }
  if (results.length > 1) results.push({ file: 'total', ...total(results) });

  if (values.json) {
    console.log(JSON.stringify(positionals.length === 0 ? results[0] ?? null : results));
  } else {
    for (const r of results) console.log([r.lines, r.words, r.chars, r.file].filter((v) => v !== null).join(' '));
  }
  return failed ? 1 : 0;
}
`;

const TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { count, total } from '../src/count.js';

const bin = fileURLToPath(new URL('../bin/wordcount.js', import.meta.url));
const run = (args, input) => spawnSync(process.execPath, [bin, ...args], { input, encoding: 'utf8' });

test('counts lines, words and characters', () => {
  assert.deepEqual(count('hello world\\nbye\\n'), { lines: 2, words: 3, chars: 16 });
  assert.deepEqual(count('no newline'), { lines: 0, words: 2, chars: 10 });
  assert.deepEqual(count(''), { lines: 0, words: 0, chars: 0 });
  assert.deepEqual(count('👋 hi'), { lines: 0, words: 2, chars: 4 });
});

test('adds counts up', () => {
  assert.deepEqual(total([count('a b\\n'), count('c\\n')]), { lines: 2, words: 3, chars: 6 });
});

test('reads standard input and prints JSON', () => {
  const res = run(['--json'], 'a b c\\n');
  assert.equal(res.status, 0);
  assert.deepEqual(JSON.parse(res.stdout), { file: null, lines: 1, words: 3, chars: 6 });
});

test('prints a line per file and a total', () => {
  const res = run([bin, bin]);
  assert.equal(res.status, 0);
  const lines = res.stdout.trim().split('\\n');
  assert.equal(lines.length, 3);
  assert.match(lines[2], /^\\d+ \\d+ \\d+ total$/);
});

test('reports bad options and missing files', () => {
  const bad = run(['--nope']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /usage: wordcount/);
  const missing = run(['does-not-exist.txt']);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /no such file/);
});
`;

export const nodeCli: ProjectTemplate = {
  id: 'node-cli',
  name: 'Node command-line tool',
  description: 'A dependency-free Node CLI (wordcount) in plain JavaScript with a bin entry, node:util parseArgs and node:test tests.',
  language: 'javascript',
  files: [
    NODE_GITIGNORE,
    jsonFile('package.json', {
      name: 'wordcount',
      version: '0.1.0',
      description: 'Count lines, words and characters',
      private: true,
      type: 'module',
      engines: { node: '>=20' },
      bin: { wordcount: 'bin/wordcount.js' },
      files: ['bin', 'src'],
      scripts: { start: 'node bin/wordcount.js', test: 'node --test test/*.test.js' },
    }),
    { path: 'README.md', content: README },
    { path: 'bin/wordcount.js', content: BIN },
    { path: 'src/count.js', content: COUNT },
    { path: 'test/count.test.js', content: TEST },
  ],
};
