import { describe, expect, it } from 'vitest';
import { defaultFileName, parseFencedFiles, safePath } from './parse-fenced-files.js';

const paths = (output: string, language = 'typescript') => parseFencedFiles(output, language).map((f) => f.path);

describe('parseFencedFiles: names from the info string', () => {
  it.each([
    ['```ts src/app.ts', 'src/app.ts'],
    ['```typescript src/app.ts', 'src/app.ts'],
    ['```python title="app.py"', 'app.py'],
    ["```python title='app.py'", 'app.py'],
    ['```ts filename=src/a.ts', 'src/a.ts'],
    ['```ts file=src/a.ts', 'src/a.ts'],
    ['```ts path="src/my file.ts"', 'src/my file.ts'],
    ['```js:lib/a.js', 'lib/a.js'],
    ['```lib/d.js', 'lib/d.js'],
    ['```app.py', 'app.py'],
    ['```bash bin/run', 'bin/run'],
    ['```make Makefile', 'Makefile'],
    ['```ts ./src/a.ts', 'src/a.ts'],
    ['```ts   src/a.ts   ', 'src/a.ts'],
    ['~~~go cmd/main.go', 'cmd/main.go'],
  ])('%s → %s', (open, expected) => {
    expect(parseFencedFiles(`${open}\nX\n${open.startsWith('~') ? '~~~' : '```'}`, 'typescript')).toEqual([{ path: expected, content: 'X\n' }]);
  });

  it('does not mistake options after the language for a name', () => {
    expect(paths('```ts {1,3}\nA\n```')).toEqual(['main.ts']);
    expect(paths('```python linenums\nA\n```', 'python')).toEqual(['main.py']);
  });
});

describe('parseFencedFiles: names from the first line (which is stripped)', () => {
  it.each([
    ['```ts\n// file: src/a.ts\nA\n```', 'src/a.ts'],
    ['```python\n# file: app.py\nA\n```', 'app.py'],
    ['```python\n# filename: pkg/app.py\nA\n```', 'pkg/app.py'],
    ['```sql\n-- path: db/schema.sql\nA\n```', 'db/schema.sql'],
    ['```html\n<!-- file: public/index.html -->\nA\n```', 'public/index.html'],
    ['```c\n/* file: src/x.c */\nA\n```', 'src/x.c'],
    ['```ts\n// src/bare.ts\nA\n```', 'src/bare.ts'],
    ['```python\n# main_module.py\nA\n```', 'main_module.py'],
  ])('%j', (output, expected) => {
    expect(parseFencedFiles(output, 'typescript')).toEqual([{ path: expected, content: 'A\n' }]);
  });

  it('keeps ordinary first-line comments, shebangs and Markdown headings', () => {
    const kept = ['// @ts-check', '#!/usr/bin/env bash', '#include <stdio.h>', '// see https://example.com/a.ts', '# A title'];
    for (const line of kept) expect(parseFencedFiles(`\`\`\`ts\n${line}\nA\n\`\`\``, 'typescript')[0]!.content).toBe(`${line}\nA\n`);
    expect(parseFencedFiles('```markdown\n# notes.md\ntext\n```', 'markdown')).toEqual([{ path: 'README.md', content: '# notes.md\ntext\n' }]);
  });

  it('strips a naming comment even when the info string already names the file (the info string wins)', () => {
    expect(parseFencedFiles('```ts src/a.ts\n// file: src/b.ts\nA\n```', 'typescript')).toEqual([{ path: 'src/a.ts', content: 'A\n' }]);
  });
});

describe('parseFencedFiles: names from the line before the fence', () => {
  it.each([
    ['### src/a.ts', 'src/a.ts'],
    ['## `src/a.ts`', 'src/a.ts'],
    ['**src/a.ts**', 'src/a.ts'],
    ['**`src/a.ts`**:', 'src/a.ts'],
    ['`src/a.ts`', 'src/a.ts'],
    ['`src/a.ts`:', 'src/a.ts'],
    ['File: src/a.ts', 'src/a.ts'],
    ['**File:** `src/a.ts`', 'src/a.ts'],
    ['1. `src/a.ts`', 'src/a.ts'],
    ['- **pkg/__init__.py**', 'pkg/__init__.py'],
    ['`Makefile`', 'Makefile'],
  ])('%s', (before, expected) => {
    expect(parseFencedFiles(`Intro.\n\n${before}\n\n\`\`\`ts\nA\n\`\`\`\n`, 'typescript')).toEqual([{ path: expected, content: 'A\n' }]);
  });

  it('ignores prose, and the previous block, as names', () => {
    expect(paths('Here is the code for app.ts:\n```ts\nA\n```')).toEqual(['main.ts']);
    expect(paths('### Input/Output\n```ts\nA\n```')).toEqual(['main.ts']);
    expect(paths('```ts a.ts\n1\n```\n```ts\n2\n```')).toEqual(['a.ts', 'main.ts']);
  });
});

describe('parseFencedFiles: default names', () => {
  it('names nameless blocks by language, numbered when several share a name', () => {
    expect(paths('```python\na\n```\ntext\n```python\nb\n```\n```python\nc\n```', 'python')).toEqual(['main.py', 'main2.py', 'main3.py']);
    expect(paths('```\nplain\n```', 'rust')).toEqual(['main.rs']);
  });

  it("uses the block's language when it has one, the request's otherwise", () => {
    expect(paths('```sh\nnpm test\n```\n```\nx\n```', 'typescript')).toEqual(['main.sh', 'main.ts']);
  });

  it('names a nameless Java block after its public class', () => {
    expect(paths('```java\npublic final class TodoStore {}\n```\n```java\nclass A {}\n```', 'java')).toEqual(['TodoStore.java', 'Main.java']);
  });

  it('reads a fence tag like "constructor" as an unknown language, not an inherited property', () => {
    expect(paths('```constructor\nx\n```\n```__proto__\ny\n```', 'python')).toEqual(['main.py', 'main2.py']);
    expect(defaultFileName('constructor')).toBe('main.txt');
  });

  it('never lets a default name replace a named file', () => {
    expect(paths('```ts main.ts\nnamed\n```\n```ts\nnameless\n```')).toEqual(['main.ts', 'main2.ts']);
  });

  it.each([
    ['typescript', 'main.ts'], ['ts', 'main.ts'], ['javascript', 'main.js'], ['js', 'main.js'], ['python', 'main.py'], ['py', 'main.py'],
    ['java', 'Main.java'], ['go', 'main.go'], ['golang', 'main.go'], ['rust', 'main.rs'], ['c', 'main.c'], ['cpp', 'main.cpp'],
    ['c++', 'main.cpp'], ['bash', 'main.sh'], ['shell', 'main.sh'], ['csharp', 'Program.cs'], ['ruby', 'main.rb'], ['php', 'index.php'],
    ['kotlin', 'Main.kt'], ['swift', 'main.swift'], ['sql', 'schema.sql'], ['html', 'index.html'], ['Python', 'main.py'], ['cobol', 'main.txt'],
  ])('defaultFileName(%s) = %s', (language, name) => {
    expect(defaultFileName(language)).toBe(name);
  });
});

describe('parseFencedFiles: structure', () => {
  it('treats output without fences as one file holding everything, byte for byte', () => {
    expect(parseFencedFiles('print("hi")\n', 'python')).toEqual([{ path: 'main.py', content: 'print("hi")\n' }]);
    expect(parseFencedFiles('', 'go')).toEqual([{ path: 'main.go', content: '' }]);
    expect(parseFencedFiles('use ```inline``` quotes', 'typescript')).toEqual([{ path: 'main.ts', content: 'use ```inline``` quotes' }]);
  });

  it('lets a later block at the same path win, keeping the first position', () => {
    expect(parseFencedFiles('```ts a.ts\n1\n```\n```ts b.ts\nb\n```\n```ts a.ts\n2\n```', 'typescript')).toEqual([
      { path: 'a.ts', content: '2\n' }, { path: 'b.ts', content: 'b\n' },
    ]);
  });

  it('keeps an unterminated final block', () => {
    expect(parseFencedFiles('```ts a.ts\nconst x = 1;', 'typescript')).toEqual([{ path: 'a.ts', content: 'const x = 1;\n' }]);
  });

  it('handles longer fences containing shorter ones, and tildes containing backticks', () => {
    expect(parseFencedFiles('````markdown README.md\n# T\n```sh\nnpm i\n```\n````', 'typescript')).toEqual([{ path: 'README.md', content: '# T\n```sh\nnpm i\n```\n' }]);
    expect(parseFencedFiles('~~~md README.md\n```js\nx\n```\n~~~', 'typescript')).toEqual([{ path: 'README.md', content: '```js\nx\n```\n' }]);
  });

  it('keeps empty files, blank lines and trailing blank lines exactly', () => {
    expect(parseFencedFiles('```python pkg/__init__.py\n```\n```python a.py\n\nx = 1\n\n```', 'python')).toEqual([
      { path: 'pkg/__init__.py', content: '' }, { path: 'a.py', content: '\nx = 1\n\n' },
    ]);
  });

  it('reads CRLF output and removes the indentation of an indented fence', () => {
    expect(parseFencedFiles('```ts a.ts\r\nA\r\n```\r\n', 'typescript')).toEqual([{ path: 'a.ts', content: 'A\n' }]);
    expect(parseFencedFiles('1. Step\n   ```ts a.ts\n   if (x) {\n     y();\n   }\n   ```', 'typescript')).toEqual([{ path: 'a.ts', content: 'if (x) {\n  y();\n}\n' }]);
  });

  it('ignores prose between blocks and accepts a mix of conventions in one answer', () => {
    const out = [
      'Here is the project.', '', '```typescript src/server.ts', 'server', '```', '', 'And a test:', '',
      '### test/server.test.ts', '```typescript', 'test', '```', '```json', '// file: package.json', '{}', '```', 'Done.',
    ].join('\n');
    expect(parseFencedFiles(out, 'typescript')).toEqual([
      { path: 'src/server.ts', content: 'server\n' }, { path: 'test/server.test.ts', content: 'test\n' }, { path: 'package.json', content: '{}\n' },
    ]);
  });
});

describe('parseFencedFiles: unsafe paths', () => {
  it.each(['/etc/passwd', '../x.ts', 'a/../../b.ts', 'a\\b.ts', 'a//b.ts', 'C:/x.ts', '~/x.ts', './../x.ts', 'a/./b.ts', 'a\u0000.ts', ''])('safePath(%j) refuses', (bad) => {
    expect(safePath(bad)).toBeUndefined();
  });

  it('accepts and normalises ordinary relative paths', () => {
    for (const good of ['a.ts', 'src/a.ts', '.gitignore', 'deep/er/path/x.test.ts', 'Makefile']) expect(safePath(good)).toBe(good);
    expect(safePath('./src/a.ts')).toBe('src/a.ts');
    expect(safePath('"src/a.ts"')).toBe('src/a.ts');
  });

  it.each([
    '```ts ../../evil.ts', '```ts /etc/passwd', '```ts title="..\\\\evil.ts"', '```ts filename=C:/evil.ts', '```ts src/../../evil.ts',
  ])('falls back to the default name for %s', (open) => {
    expect(parseFencedFiles(`${open}\nX\n\`\`\``, 'typescript')).toEqual([{ path: 'main.ts', content: 'X\n' }]);
  });

  it('falls back for unsafe first-line and line-before names too, and never trusts a weaker name over an unsafe one', () => {
    expect(paths('```ts\n// file: ../evil.ts\nX\n```')).toEqual(['main.ts']);
    expect(paths('### ../evil.ts\n```ts\nX\n```')).toEqual(['main.ts']);
    expect(paths('### src/ok.ts\n```ts ../evil.ts\nX\n```')).toEqual(['main.ts']);
    expect(paths('```ts\n// file: /abs.ts\nX\n```')).toEqual(['main.ts']);
  });
});
