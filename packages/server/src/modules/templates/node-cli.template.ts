import { NODE_GITIGNORE, type ProjectTemplate } from './project-template.js';

export const nodeCli: ProjectTemplate = {
  id: 'node-cli',
  name: 'Node command-line tool',
  description: 'A dependency-free Node CLI (wordcount) with argument parsing, a bin entry and tests.',
  language: 'javascript',
  files: [
    NODE_GITIGNORE,
    { path: 'package.json', content: `${JSON.stringify({ name: 'wordcount', version: '0.1.0', private: true, type: 'module', bin: { wordcount: 'bin/wordcount.js' }, scripts: { test: 'node --test test/' } }, null, 2)}\n` },
    { path: 'README.md', content: '# wordcount\n\nCounts lines, words and characters.\n\n```sh\necho "hello world" | node bin/wordcount.js\nnode bin/wordcount.js --json README.md\nnpm test\n```\n' },
    { path: 'src/count.js', content: `/** Lines, words and characters of a text, as wc counts them. */\nexport function count(text) {\n  const lines = text === '' ? 0 : text.split('\\n').length - (text.endsWith('\\n') ? 1 : 0);\n  const words = text.split(/\\s+/).filter(Boolean).length;\n  return { lines, words, chars: [...text].length };\n}\n` },
    { path: 'bin/wordcount.js', content: `#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { count } from '../src/count.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  console.log('usage: wordcount [--json] [file]');
  process.exit(0);
}
const text = readFileSync(positionals[0] ?? 0, 'utf8');
const result = count(text);
console.log(values.json ? JSON.stringify(result) : \`\${result.lines} \${result.words} \${result.chars}\`);
` },
    { path: 'test/count.test.js', content: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { count } from '../src/count.js';

test('counts lines, words and characters', () => {
  assert.deepEqual(count('hello world\\nbye\\n'), { lines: 2, words: 3, chars: 16 });
  assert.deepEqual(count(''), { lines: 0, words: 0, chars: 0 });
});

test('the command reads standard input and prints JSON', () => {
  const out = execFileSync(process.execPath, ['bin/wordcount.js', '--json'], { input: 'a b c\\n' });
  assert.deepEqual(JSON.parse(out), { lines: 1, words: 3, chars: 6 });
});
` },
  ],
};
