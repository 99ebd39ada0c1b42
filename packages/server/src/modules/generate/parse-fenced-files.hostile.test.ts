import fc from 'fast-check';
import type { GeneratedFile } from '@codeloom/protocol';
import { lookupTable } from '@codeloom/protocol';
import { describe, expect, it } from 'vitest';
import { parseFencedFiles, safePath } from './parse-fenced-files.js';

/**
 * Hostile answers (issue 22 item 5: parsing takes time linear in the answer's length). Each shape here once took
 * seconds to minutes; now each must parse, and give the answer the parser always gave. No wall-clock assertions:
 * `npm run bench parse` measures µs/KB; a quadratic regression shows here as a test that runs past its timeout.
 * The last suite compares the parser with its former, regex-based version (kept below as `legacy`) on generated
 * answers: FUZZ_SEED replays a run, FUZZ_RUNS scales it.
 */

const MB = 1024 * 1024;
const FENCE = '\n```ts\nA\n```\n';
const one = (output: string, language = 'typescript') => {
  const files = parseFencedFiles(output, language);
  expect(files).toHaveLength(1);
  return files[0]!;
};

describe('parseFencedFiles on hostile answers', () => {
  it('a line of 160,000 blanks after a fence header is the content', () => {
    const blanks = ' '.repeat(160_000);
    expect(one(`\`\`\`ts\n${blanks}\n\`\`\``)).toEqual({ path: 'main.ts', content: `${blanks}\n` });
    expect(one(`\`\`\`ts\n${blanks}x\n\`\`\``)).toEqual({ path: 'main.ts', content: `${blanks}x\n` });
    expect(one(`\`\`\`ts\n\t${blanks}\u2028${blanks}\n\`\`\``).path).toBe('main.ts');
  });

  it('a naming first line followed by 160,000 blanks names the file; with a word after the blanks it is content', () => {
    const blanks = ' '.repeat(160_000);
    expect(one(`\`\`\`ts\n// file: a.ts${blanks}\nA\n\`\`\``)).toEqual({ path: 'a.ts', content: 'A\n' });
    expect(one(`\`\`\`html\n<!-- file: a.html${blanks}-->${blanks}\nA\n\`\`\``)).toEqual({ path: 'a.html', content: 'A\n' });
    expect(one(`\`\`\`c\n/*${blanks}path${blanks}:${blanks}a.c${blanks}*/\nA\n\`\`\``)).toEqual({ path: 'a.c', content: 'A\n' });
    expect(one(`\`\`\`ts\n// file: a.ts${blanks}x\nA\n\`\`\``)).toEqual({ path: 'main.ts', content: `// file: a.ts${blanks}x\nA\n` });
    expect(one(`\`\`\`ts\n#${blanks}a.ts${blanks}x\nA\n\`\`\``).path).toBe('main.ts');
    expect(one(`\`\`\`ts\n#${blanks}a.ts${blanks}\nA\n\`\`\``)).toEqual({ path: 'a.ts', content: 'A\n' });
  });

  it('a 1 MB line of `*` before a fence names nothing; 1 MB of `**` layers around a name is peeled to the name', () => {
    expect(one(`${'*'.repeat(MB)}${FENCE}`)).toEqual({ path: 'main.ts', content: 'A\n' });
    expect(one(`${'**'.repeat(MB / 4)}src/a.ts${'**'.repeat(MB / 4)}${FENCE}`)).toEqual({ path: 'src/a.ts', content: 'A\n' });
    expect(one(`${'`'.repeat(MB / 2)}a.ts${'`'.repeat(MB / 2)}${FENCE}`)).toEqual({ path: 'a.ts', content: 'A\n' });
    expect(one(`${'**File:** '.repeat(MB / 10)}a.ts${FENCE}`)).toEqual({ path: 'a.ts', content: 'A\n' });
    expect(one(`a.ts${':'.repeat(MB)}${FENCE}`)).toEqual({ path: 'a.ts', content: 'A\n' });
    expect(one(`file${' '.repeat(MB / 2)}x${' :'.repeat(MB / 4)}${FENCE}`)).toEqual({ path: 'main.ts', content: 'A\n' });
  });

  it('1 MB of backticks: one line opens a fence that never closes; lines of ``` open and close empty blocks', () => {
    expect(one('`'.repeat(MB))).toEqual({ path: 'main.ts', content: '' });
    const files = parseFencedFiles('```\n'.repeat(MB / 4), 'typescript');
    expect(files).toHaveLength(MB / 8);
    expect(files.at(-1)).toEqual({ path: `main${MB / 8}.ts`, content: '' });
    expect(one(`\`\`\`ts a.ts\n${'`'.repeat(MB)}`)).toEqual({ path: 'a.ts', content: '' });
  });

  it('a fence of 1 MB of tildes (or backticks) ending in a lone CR is no fence, as before', () => {
    const tildes = `${'~'.repeat(MB)}\r\r\nA`;
    expect(parseFencedFiles(tildes, 'typescript')).toEqual([{ path: 'main.ts', content: tildes }]);
    const ticks = `${'`'.repeat(MB)}\u2028\nA`;
    expect(parseFencedFiles(ticks, 'typescript')).toEqual([{ path: 'main.ts', content: ticks }]);
  });

  it('tens of thousands of fences give as many files', () => {
    const files = parseFencedFiles('```ts\nA\n```\n'.repeat(50_000), 'typescript');
    expect(files).toHaveLength(50_000);
    expect(files[0]).toEqual({ path: 'main.ts', content: 'A\n' });
    expect(files.at(-1)).toEqual({ path: 'main50000.ts', content: 'A\n' });
    const named = parseFencedFiles(Array.from({ length: 30_000 }, (_, i) => `### src/f${i}.ts\n\`\`\`ts\n${i}\n\`\`\``).join('\n'), 'typescript');
    expect(named).toHaveLength(30_000);
    expect(named.at(-1)).toEqual({ path: 'src/f29999.ts', content: '29999\n' });
  });

  it('a nameless block after 50,000 blocks named main.ts, main2.ts, … gets the next free name (it used to overflow the stack)', () => {
    const named = Array.from({ length: 50_000 }, (_, i) => `\`\`\`ts main${i === 0 ? '' : i + 1}.ts\nA\n\`\`\``).join('\n');
    const files = parseFencedFiles(`${named}\n\`\`\`ts\nB\n\`\`\``, 'typescript');
    expect(files).toHaveLength(50_001);
    expect(files.at(-1)).toEqual({ path: 'main50001.ts', content: 'B\n' });
  });

  it('unterminated fences keep the rest of the answer (its final empty line included)', () => {
    const inner = '```\n'.repeat(100_000);
    expect(one(`\`\`\`\`ts a.ts\n${inner}`)).toEqual({ path: 'a.ts', content: `${inner}\n` });
    expect(one(`~~~\n${'```ts\nx\n'.repeat(50_000)}`).content).toBe(`${'```ts\nx\n'.repeat(50_000)}\n`);
    expect(one(`\`\`\`ts\n${'x\n'.repeat(200_000)}`).content).toBe(`${'x\n'.repeat(200_000)}\n`);
  });

  it('alternating blank and `#` lines, before a fence and inside Java blocks', () => {
    const alternating = '\n#'.repeat(200_000);
    expect(one(`${alternating}${FENCE}`)).toEqual({ path: 'main.ts', content: 'A\n' });
    expect(one(`\`\`\`java\n${alternating}\n\`\`\``, 'java')).toEqual({ path: 'Main.java', content: `${alternating}\n` });
    expect(one(`\`\`\`java\n${'\n'.repeat(MB)}public class Late {}\n\`\`\``, 'java').path).toBe('Late.java');
    expect(one(`\`\`\`java\n${' \n\t\n'.repeat(MB / 4)}x\n\`\`\``, 'java').path).toBe('Main.java');
    expect(one(`\`\`\`java\npublic${'\n'.repeat(MB)}final static class Spread {}\n\`\`\``, 'java').path).toBe('Spread.java');
    expect(one(`\`\`\`java\n${'public \n'.repeat(MB / 8)}\n\`\`\``, 'java').path).toBe('Main.java');
  });

  it('a long answer with CRLF line ends parses as the same answer with LF', () => {
    const unit = (n: number) => `Step ${n}.\n\n### src/f${n}.ts\n\`\`\`ts\nexport const x${n} = ${n};\n\`\`\`\n\`\`\`json\n// file: c${n}.json\n{}\n\`\`\`\n`;
    const lf = Array.from({ length: 5_000 }, (_, n) => unit(n)).join('\n');
    const files = parseFencedFiles(lf, 'typescript');
    expect(files).toHaveLength(10_000);
    expect(parseFencedFiles(lf.replaceAll('\n', '\r\n'), 'typescript')).toEqual(files);
    expect(one(`\`\`\`ts\r\n// file: a.ts${' '.repeat(160_000)}\r\nA\r\n\`\`\`\r\n`)).toEqual({ path: 'a.ts', content: 'A\n' });
  });

  it('very long info strings', () => {
    expect(one(`\`\`\`ts ${'src/a.ts '.repeat(100_000)}\nA\n\`\`\``)).toEqual({ path: 'src/a.ts', content: 'A\n' });
    expect(one(`\`\`\`${'a'.repeat(MB)}\nA\n\`\`\``, 'python')).toEqual({ path: 'main.py', content: 'A\n' });
    expect(one(`\`\`\`ts${' '.repeat(MB)}\nA\n\`\`\``)).toEqual({ path: 'main.ts', content: 'A\n' });
    expect(one(`\`\`\`ts ${'title '.repeat(MB / 6)}=\nA\n\`\`\``)).toEqual({ path: 'main.ts', content: 'A\n' });
    // A name of 1 MB of quotes is no name (over 300 characters once its outer quotes are gone).
    expect(one(`\`\`\`ts title="x${"'".repeat(MB)}x"\nA\n\`\`\``)).toEqual({ path: 'main.ts', content: 'A\n' });
    expect(safePath(`x${'"'.repeat(MB)}x`)).toBeUndefined();
    expect(safePath(`${'"'.repeat(MB)}a.ts${"'".repeat(MB)}`)).toBe('a.ts');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The parser as it was before it was made linear (as of 71646d5), verbatim but for `export`: the reference the
// rewrite must agree with. Its patterns backtrack quadratically, so it only ever sees short generated answers.
// ---------------------------------------------------------------------------------------------------------------
const legacy = (() => {
  const LANGUAGE_IDS = lookupTable<string>({
    ts: 'typescript', tsx: 'typescript', typescript: 'typescript', js: 'javascript', jsx: 'javascript', mjs: 'javascript',
    javascript: 'javascript', node: 'javascript', py: 'python', python: 'python', python3: 'python', java: 'java',
    go: 'go', golang: 'go', rs: 'rust', rust: 'rust', c: 'c', h: 'c', cpp: 'cpp', 'c++': 'cpp', cxx: 'cpp', cc: 'cpp',
    hpp: 'cpp', cs: 'csharp', csharp: 'csharp', 'c#': 'csharp', rb: 'ruby', ruby: 'ruby', php: 'php', kt: 'kotlin',
    kotlin: 'kotlin', swift: 'swift', sh: 'bash', bash: 'bash', shell: 'bash', zsh: 'bash', sql: 'sql', html: 'html',
    css: 'css', md: 'markdown', markdown: 'markdown', json: 'json', yaml: 'yaml', yml: 'yaml', toml: 'toml',
  });

  const DEFAULT_NAMES = lookupTable<string>({
    typescript: 'main.ts', javascript: 'main.js', python: 'main.py', java: 'Main.java', go: 'main.go', rust: 'main.rs',
    c: 'main.c', cpp: 'main.cpp', csharp: 'Program.cs', ruby: 'main.rb', php: 'index.php', kotlin: 'Main.kt',
    swift: 'main.swift', bash: 'main.sh', sql: 'schema.sql', html: 'index.html', css: 'styles.css',
    markdown: 'README.md', json: 'data.json', yaml: 'config.yaml', toml: 'config.toml',
  });

  /** The file name a nameless block of this language (id or common alias) gets. */
  function defaultFileName(language: string): string {
    const id = LANGUAGE_IDS[language.trim().toLowerCase()] ?? language.trim().toLowerCase();
    return DEFAULT_NAMES[id] ?? 'main.txt';
  }

  /**
   * A path we are willing to store, normalised (quotes and a leading `./`
   * dropped), or undefined: relative, no `..`/`.`/empty segments, no
   * backslashes, drive letters, `~` or control characters.
   */
  function safePath(candidate: string | undefined): string | undefined {
    if (!candidate) return undefined;
    const p = candidate.trim().replace(/^["'`]+|["'`]+$/g, '').replace(/^\.\//, '');
    if (!p || p.length > 300 || p.startsWith('/') || p.startsWith('~') || p.includes('\\')) return undefined;
    if (/[\u0000-\u001f\u007f]/.test(p) || /^[A-Za-z]:/.test(p)) return undefined;
    if (p.split('/').some((seg) => seg === '..' || seg === '.' || seg === '')) return undefined;
    return p;
  }

  const BARE_NAMES = /^(Makefile|Dockerfile|Containerfile|Gemfile|Rakefile|Procfile|Justfile|LICENSE|README|CODEOWNERS)$/;

  /**
   * Does this word look like a file path rather than prose (`app.py`,
   * `src/x.ts`, `Makefile`)? An extensionless `bin/run` counts only where a
   * path is expected anyway (after the language in an info string).
   */
  function pathLike(word: string, extensionless = false): boolean {
    if (!/^[\w@.+~-][\w@.+~/-]*$/.test(word)) return false;
    const name = word.split('/').pop()!;
    const extension = /\.[A-Za-z0-9_+-]+$/.test(name) && !/^\d+(\.\d+)+$/.test(name);
    return extension || BARE_NAMES.test(name) || /^\.[\w.-]+$/.test(name) || (extensionless && word.includes('/') && name !== '');
  }

  interface InfoString { language: string | undefined; path: string | undefined }

  /** ```ts src/a.ts, ```python title="app.py", ```ts filename=src/a.ts, ```js:lib/a.js, ```app.py (path unchecked) */
  function readInfo(info: string): InfoString {
    const attr = /\b(?:title|filename|file|path|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))/i.exec(info);
    let [first, second] = info.trim().split(/\s+/).filter(Boolean);
    const colon = first && /^([\w+#-]+):(.+)$/.exec(first);
    if (colon) [first, second] = [colon[1], colon[2]];
    if (attr) return { language: first, path: attr[1] ?? attr[2] ?? attr[3] };
    // `linenums` or `{1,3}` after the language are options, not names.
    if (second && (pathLike(second, true) || /[/\\.]/.test(second)) && !second.startsWith('{')) return { language: first, path: second };
    // A lone word that is a file name (```app.py) names the file; a lone language (```ts) does not.
    if (first && pathLike(first) && first.includes('.') && !(first.toLowerCase() in LANGUAGE_IDS)) {
      return { language: first.split('.').pop()!.toLowerCase(), path: first };
    }
    return { language: first, path: undefined };
  }

  /** `// file: src/a.ts`, `# filename: app.py`, `<!-- path: x.html -->`, or a bare `// src/a.ts`. */
  const FIRST_LINE_LABELLED = /^\s*(?:\/\/|#|--|;|<!--|\/\*)\s*(?:file(?:name)?|path)\s*:\s*(\S+?)\s*(?:-->|\*\/)?\s*$/i;
  const FIRST_LINE_BARE = /^\s*(?:\/\/|#|--)\s*(\S+\.[A-Za-z0-9]+)\s*$/;

  function readFirstLine(line: string | undefined, language: string | undefined): string | undefined {
    if (line === undefined) return undefined;
    const labelled = FIRST_LINE_LABELLED.exec(line);
    if (labelled) return labelled[1];
    // In Markdown a `# word.md` first line is a heading, not a name.
    if (language && LANGUAGE_IDS[language.toLowerCase()] === 'markdown') return undefined;
    const bare = FIRST_LINE_BARE.exec(line);
    return bare && pathLike(bare[1]!) ? bare[1] : undefined;
  }

  /** `### src/a.ts`, `**src/a.ts**`, `` `src/a.ts` ``, `File: src/a.ts`, `1. **`src/a.ts`**:` */
  function readLineBefore(line: string | undefined): string | undefined {
    if (!line) return undefined;
    let s = line.trim().replace(/^(?:#{1,6}\s+|[-+]\s+|\*\s+(?!\*)|\d+[.)]\s+)/, '');
    // Peel decorations one layer at a time; stripping characters instead would eat the underscores of __init__.py.
    for (let previous = ''; previous !== s;) {
      previous = s;
      s = s.trim().replace(/:$/, '').replace(/^(\*\*|\*|`)(.+)\1$/, '$2').replace(/^(?:\*\*)?(?:file(?:name)?|path)\s*:\s*(?:\*\*)?/i, '');
    }
    return s && !/\s/.test(s) && pathLike(s) ? s : undefined;
  }

  /** Java insists a public class lives in a file of its name, so a nameless Java block is named after it. */
  function javaName(content: string): string | undefined {
    const m = /^\s*public\s+(?:(?:final|abstract|sealed|static)\s+)*(?:class|interface|record|enum)\s+([A-Z]\w*)/m.exec(content);
    return m ? `${m[1]}.java` : undefined;
  }

  const OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;

  /**
   * Files from a model's Markdown output. Nameless blocks get a default name
   * by language (the block's, else the request's), numbered when several share
   * it; output with no fence is one file holding everything; a later block at
   * the same path wins. Never returns an empty list.
   */
  function parseFencedFiles(output: string, language: string): GeneratedFile[] {
    const lines = output.split(/\r?\n/);
    const files = new Map<string, string>();
    const defaultsUsed = new Map<string, number>();
    const nextDefault = (base: string): string => {
      const n = (defaultsUsed.get(base) ?? 0) + 1;
      defaultsUsed.set(base, n);
      const dot = base.lastIndexOf('.');
      const name = n === 1 ? base : dot > 0 ? `${base.slice(0, dot)}${n}${base.slice(dot)}` : `${base}${n}`;
      // A nameless block must not silently replace a file the output named.
      return files.has(name) ? nextDefault(base) : name;
    };
    let previousEnd = 0;
    for (let i = 0; i < lines.length; i++) {
      const open = OPEN.exec(lines[i]!);
      // A backtick fence's info string may not contain backticks (CommonMark), so `inline ```code```` is no fence.
      if (!open || (open[2]![0] === '`' && open[3]!.includes('`'))) continue;
      const [, indent, fence, rawInfo] = open as unknown as [string, string, string, string];
      const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length && !close.test(lines[j]!); j++) body.push(unindent(lines[j]!, indent.length));
      const info = readInfo(rawInfo);
      const firstLine = readFirstLine(body[0], info.language);
      if (firstLine !== undefined) body.shift();
      const before = lines.slice(previousEnd, i).reverse().find((l) => l.trim() !== '');
      // The most trusted name decides; if it is unsafe the block gets a default name rather than a less trusted one.
      let path = safePath(info.path ?? firstLine ?? readLineBefore(before));
      const content = body.length ? `${body.join('\n')}\n` : '';
      if (!path) {
        const blockLanguage = info.language && LANGUAGE_IDS[info.language.toLowerCase()] ? info.language : language;
        const java = LANGUAGE_IDS[blockLanguage.toLowerCase()] === 'java' ? javaName(content) : undefined;
        path = java && !files.has(java) ? java : nextDefault(defaultFileName(blockLanguage));
      }
      files.set(path, content);
      i = j;
      previousEnd = j + 1;
    }
    if (files.size === 0) return [{ path: defaultFileName(language), content: output }];
    return [...files].map(([path, content]) => ({ path, content }));
  }

  /** Content of an indented fence loses as much indentation as the fence had (CommonMark). */
  function unindent(line: string, width: number): string {
    let n = 0;
    while (n < width && line[n] === ' ') n++;
    return line.slice(n);
  }
  return { parseFencedFiles, safePath };
})();

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

const TOKENS = ['```', '````', '~~~', '`', '*', '**', ' ', '  ', '    ', '\t', '\n', '\n', '\r\n', '\r', '\u2028', '\u00a0', '\ufeff', ':',
  'file', 'FILE', 'filename', 'path', 'name', 'title=', '=', '//', '#', '##', '--', ';', '<!--', '-->', '/*', '*/', 'a.ts', 'src/a.ts',
  'x', '.', '1', '__init__.py', 'public', 'class', 'final', 'Foo', 'java', 'ts', 'md', '"', "'", '../', './', '/', '\\', 'Makefile',
  '1.', '- ', '### ', '{1,3}', 'main.ts', 'main2.ts', 'js:lib/a.js', '\u0000', 'ı', 'K'];
const piece = (max: number, newlines = true) => fc.array(fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...TOKENS.filter((t) => newlines || !t.includes('\n'))) },
  { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
), { maxLength: max }).map((t) => t.join(''));
const opt = (xs: string[]) => fc.constantFrom('', ...xs);
const blank = opt([' ', '  ', '\t', '\u2028', '\r', '\u00a0']);
const word = fc.oneof(fc.constantFrom('a.ts', 'src/a.ts', '__init__.py', 'Makefile', '-->', '*/', 'a.ts-->', 'a.ts*/', '1.2', 'a b.ts', '.env', 'a.ts:'), piece(4, false));
/** The line before a fence: list marker, decorations, a label, the name, colons, in any combination. */
const lineBefore = fc.tuple(blank, opt(['# ', '### ', '- ', '* ', '1. ', '*  *']), opt(['**', '*', '`', '**`', '***']), opt(['File:', 'FILENAME:', 'path :', '**File:**', 'path:\u2028']),
  blank, word, opt(['`', '**', '*', '`**']), opt(['**', '*', '`']), opt([':', '::', ' :']), blank).map((p) => p.join(''));
/** A block's first line: comment opener, label, colon, the name, a closer, blanks anywhere. */
const firstLine = fc.tuple(blank, opt(['//', '#', '--', ';', '<!--', '/*', '-']), blank, opt(['file', 'FILE', 'filename', 'path', 'filenam']), blank, opt([':', '::']),
  blank, word, blank, opt(['-->', '*/', '--> -->', '->']), blank).map((p) => p.join(''));
const javaLine = fc.constantFrom('public class Foo', 'public final static class Bar {', '', '  ', 'x', 'public', 'class Baz', '\r', '\u2028public enum E', 'public\u00a0interface I', 'xpublic class U');
const block = fc.tuple(lineBefore, fc.constantFrom('```', '```ts', '```java', '```md', '````', '~~~python', ' ```ts', '    ```'), piece(6, false), firstLine,
  fc.array(fc.oneof(javaLine, piece(8, false)), { maxLength: 3 }), fc.constantFrom('```', '~~~', '', '  ```\r'), fc.constantFrom('\n', '\r\n'))
  .map(([before, open, info, first, body, close, eol]) => [before, `${open}${info}`, first, ...body, close].join(eol));
const answer = fc.oneof(piece(40), fc.array(block, { maxLength: 3 }).map((b) => b.join('\n')), lineBefore, firstLine);
const language = fc.constantFrom('typescript', 'java', 'markdown', 'python', 'cobol', 'constructor');

describe('parseFencedFiles agrees with its former version', () => {
  it(`on ${RUNS} generated answers`, () => {
    try {
      fc.assert(fc.property(answer, language, (output, lang) => {
        expect(parseFencedFiles(output, lang)).toEqual<GeneratedFile[]>(legacy.parseFencedFiles(output, lang));
        expect(safePath(output)).toBe(legacy.safePath(output));
      }), { seed: SEED, numRuns: RUNS });
    } finally {
      process.stdout.write(`fuzz (parseFencedFiles against its former version): ${RUNS} answers, seed ${SEED}\n`);
    }
  });

  it('with every blank and line break, their neighbours and Latin-1, where blanks and breaks matter', () => {
    const blanks = Array.from({ length: 0x10000 }, (_, c) => c).filter((c) => /\s/.test(String.fromCharCode(c)));
    const units = new Set([...Array.from({ length: 0x100 }, (_, c) => c), ...blanks.flatMap((c) => [c - 1, c, c + 1]), 0x85, 0x180e, 0x200b, 0x2060]);
    for (const c of units) {
      const ch = String.fromCharCode(c);
      for (const output of [
        `\`\`\`ts\n//${ch}file${ch}:${ch}a.ts${ch}-->${ch}\nA\n\`\`\``,
        `\`\`\`ts\n#${ch}a.ts${ch}\n\`\`\`${ch}`,
        `${ch}**File:${ch}**${ch}\`file:${ch}a.ts\`${ch}:\n\`\`\`java ${ch}\n${ch}public${ch}class${ch}Foo\n\`\`\``,
      ]) expect(parseFencedFiles(output, 'typescript'), JSON.stringify(output)).toEqual(legacy.parseFencedFiles(output, 'typescript'));
    }
  });
});
