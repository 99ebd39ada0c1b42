import { describe, expect, it } from 'vitest';
import { parseFencedFiles, safePath } from './parse-fenced-files.js';

describe('parseFencedFiles', () => {
  it('names files from the info string in its common spellings', () => {
    const out = '```ts src/a.ts\nA\n```\n```python title="app.py"\nB\n```\n```ts filename=src/c.ts\nC\n```\n```lib/d.js\nD\n```';
    expect(parseFencedFiles(out, 'typescript')).toEqual([
      { path: 'src/a.ts', content: 'A\n' }, { path: 'app.py', content: 'B\n' }, { path: 'src/c.ts', content: 'C\n' }, { path: 'lib/d.js', content: 'D\n' },
    ]);
  });

  it('names files from a first-line comment (and strips it) or the line before the fence', () => {
    const out = '```ts\n// file: src/x.ts\nX\n```\n\n### src/y.ts\n```ts\nY\n```\n**z.py**\n```python\n# file: ignored-when-named\nZ\n```\n`w.go`\n```go\nW\n```';
    const files = parseFencedFiles(out, 'typescript');
    expect(files.map((f) => f.path)).toEqual(['src/x.ts', 'src/y.ts', 'z.py', 'w.go']);
    expect(files[0]!.content).toBe('X\n');
  });

  it('gives nameless blocks default names by language, numbered', () => {
    expect(parseFencedFiles('```python\na\n```\ntext\n```python\nb\n```', 'python').map((f) => f.path)).toEqual(['main.py', 'main2.py']);
    expect(parseFencedFiles('```java\nclass A {}\n```', 'java')[0]!.path).toBe('Main.java');
  });

  it('treats output without fences as one file holding everything', () => {
    expect(parseFencedFiles('print("hi")', 'python')).toEqual([{ path: 'main.py', content: 'print("hi")' }]);
  });

  it('lets a later block at the same path win', () => {
    expect(parseFencedFiles('```ts a.ts\n1\n```\n```ts a.ts\n2\n```', 'typescript')).toEqual([{ path: 'a.ts', content: '2\n' }]);
  });

  it('refuses unsafe paths and falls back to the default name', () => {
    for (const bad of ['/etc/passwd', '../x.ts', 'a/../../b.ts', 'a\\b.ts', 'a//b.ts']) expect(safePath(bad)).toBeUndefined();
    expect(parseFencedFiles('```ts ../../evil.ts\nX\n```', 'typescript')[0]!.path).toBe('main.ts');
  });

  it('keeps an unterminated final block', () => {
    expect(parseFencedFiles('```ts a.ts\nconst x = 1;', 'typescript')).toEqual([{ path: 'a.ts', content: 'const x = 1;\n' }]);
  });

  it('handles longer fences containing shorter ones', () => {
    const out = '````markdown README.md\n# T\n```sh\nnpm i\n```\n````';
    expect(parseFencedFiles(out, 'typescript')).toEqual([{ path: 'README.md', content: '# T\n```sh\nnpm i\n```\n' }]);
  });
});
