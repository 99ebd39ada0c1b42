import type { GeneratedFile } from '@codeloom/protocol';
import { lookupTable } from '@codeloom/protocol';

/**
 * Recovers files from a model's raw Markdown. Models name files in several
 * ways and none is universal, so every common convention is accepted, in
 * this order of trust: a path in the fence's info string, a "file:" comment
 * on the block's first line, a heading/bold/backticked path on the line just
 * before the fence. What cannot be named safely gets a default name, so a
 * hostile or sloppy output can never write outside the project.
 *
 * The answer is attacker-shaped text, so everything here runs in time linear
 * in its length: no pattern that can backtrack over a run more than a bounded
 * number of times, no loop that re-scans what it has already read. Where a
 * pattern once did (`\s*(?:-->)?\s*$` over a long blank tail, `~{3,}(.*)$`
 * on a line ending in a lone CR, `^\s*` under the `m` flag over blank lines,
 * peeling `**` one layer per pass), the scanners below give the same answers.
 */

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
export function defaultFileName(language: string): string {
  const id = LANGUAGE_IDS[language.trim().toLowerCase()] ?? language.trim().toLowerCase();
  return DEFAULT_NAMES[id] ?? 'main.txt';
}

/**
 * A path we are willing to store, normalised (quotes and a leading `./`
 * dropped), or undefined: relative, no `..`/`.`/empty segments, no
 * backslashes, drive letters, `~` or control characters.
 */
export function safePath(candidate: string | undefined): string | undefined {
  if (!candidate) return undefined;
  const p = stripQuotes(candidate.trim()).replace(/^\.\//, '');
  if (!p || p.length > 300 || p.startsWith('/') || p.startsWith('~') || p.includes('\\')) return undefined;
  if (/[\u0000-\u001f\u007f]/.test(p) || /^[A-Za-z]:/.test(p)) return undefined;
  if (p.split('/').some((seg) => seg === '..' || seg === '.' || seg === '')) return undefined;
  return p;
}

/** `s` without the quotes (`"`, `'`, backtick) it starts and ends with; one scan from each end. */
function stripQuotes(s: string): string {
  const quote = (c: number) => c === 34 || c === 39 || c === 96;
  let from = 0;
  let to = s.length;
  while (from < to && quote(s.charCodeAt(from))) from++;
  while (to > from && quote(s.charCodeAt(to - 1))) to--;
  return s.slice(from, to);
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

/** The first two words of an info string. */
const FIRST_WORDS = /^\s*(\S+)(?:\s+(\S+))?/;

interface InfoString { language: string | undefined; path: string | undefined }

/** ```ts src/a.ts, ```python title="app.py", ```ts filename=src/a.ts, ```js:lib/a.js, ```app.py (path unchecked) */
function readInfo(info: string): InfoString {
  const attr = /\b(?:title|filename|file|path|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))/i.exec(info);
  const words = FIRST_WORDS.exec(info);
  let first = words?.[1];
  let second = words?.[2];
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

/** `// file: src/a.ts`, `# filename: app.py`, `<!-- path: x.html -->`: everything up to the name. */
const LABEL = /^\s*(?:\/\/|#|--|;|<!--|\/\*)\s*(?:file(?:name)?|path)\s*:\s*/i;
/** `// src/a.ts`, `# app.py`: everything up to the name. */
const COMMENT = /^\s*(?:\/\/|#|--)\s*/;

function readFirstLine(line: string | undefined, language: string | undefined): string | undefined {
  if (line === undefined) return undefined;
  const labelled = labelledName(line);
  if (labelled !== undefined) return labelled;
  // In Markdown a `# word.md` first line is a heading, not a name.
  if (language && LANGUAGE_IDS[language.toLowerCase()] === 'markdown') return undefined;
  const bare = bareName(line);
  return bare && pathLike(bare) ? bare : undefined;
}

/**
 * The name after `file:`: one word, then nothing but blanks, or blanks and a
 * comment closer (`-->`, `*\/`). The shortest word that fits wins, so
 * `a.ts-->` names a.ts while a lone `-->` is the name itself.
 */
function labelledName(line: string): string | undefined {
  const label = LABEL.exec(line);
  if (!label) return undefined;
  const rest = line.slice(label[0].length, trimmedEnd(line, label[0].length, line.length));
  const closer = rest.endsWith('-->') ? 3 : rest.endsWith('*/') ? 2 : 0;
  if (closer) {
    const name = rest.slice(0, trimmedEnd(rest, 0, rest.length - closer));
    if (name && !/\s/.test(name)) return name;
  }
  return rest && !/\s/.test(rest) ? rest : undefined;
}

/** `// src/a.ts`: one word with an extension (letters and digits after its last dot), then nothing but blanks. */
function bareName(line: string): string | undefined {
  const comment = COMMENT.exec(line);
  if (!comment) return undefined;
  const name = line.slice(comment[0].length, trimmedEnd(line, comment[0].length, line.length));
  const dot = name.lastIndexOf('.');
  return dot > 0 && /^[A-Za-z0-9]+$/.test(name.slice(dot + 1)) && !/\s/.test(name) ? name : undefined;
}

/** A list marker or heading hashes at the start of the line before a fence. */
const LIST_MARKER = /^(?:#{1,6}\s+|[-+]\s+|\*\s+(?!\*)|\d+[.)]\s+)/;

/** `### src/a.ts`, `**src/a.ts**`, `` `src/a.ts` ``, `File: src/a.ts`, `1. **`src/a.ts`**:` */
function readLineBefore(line: string | undefined): string | undefined {
  if (!line) return undefined;
  const s = line.trim();
  const marker = LIST_MARKER.exec(s);
  // The text still in play is s[from, to): decorations are peeled by moving the ends, never by copying.
  let from = marker ? marker[0].length : 0;
  let to = s.length;
  // `**x**` and `` `x` `` are peeled only when no line break (a lone CR, U+2028/9) lies between the marks.
  const breaks = LINE_BREAK.test(s) ? lineBreakCounts(s) : undefined;
  const unbroken = (a: number, b: number) => !breaks || breaks[a] === breaks[b];
  // A label that is not there at `from` does not appear by trimming the other end: look once per position.
  let labelLookedAt = -1;
  // Peel decorations one layer at a time; stripping characters instead would eat the underscores of __init__.py.
  for (let lastFrom = -1, lastTo = -1; from !== lastFrom || to !== lastTo;) {
    lastFrom = from;
    lastTo = to;
    // Each pass: trim, drop one trailing colon, unwrap one `**…**`, `*…*` or `` `…` `` layer, skip a `File:` label.
    from = trimmedStart(s, from, to);
    to = trimmedEnd(s, from, to);
    if (to > from && s.charCodeAt(to - 1) === COLON) to--;
    const first = s.charCodeAt(from);
    const last = s.charCodeAt(to - 1);
    if (first === STAR && s.charCodeAt(from + 1) === STAR && last === STAR && s.charCodeAt(to - 2) === STAR && to - from >= 5 && unbroken(from + 2, to - 2)) {
      from += 2;
      to -= 2;
    } else if ((first === STAR || first === BACKTICK) && last === first && to - from >= 3 && unbroken(from + 1, to - 1)) {
      from++;
      to--;
    }
    if (from !== labelLookedAt) {
      labelLookedAt = from;
      from = afterLabel(s, from, to);
    }
  }
  const name = s.slice(from, to);
  return name && !/\s/.test(name) && pathLike(name) ? name : undefined;
}

/** Past `File:`, `path :`, `**File:**` starting at `from` (ASCII letters in any case), or `from` when there is none. */
function afterLabel(s: string, from: number, to: number): number {
  let at = from;
  if (at + 2 <= to && s.charCodeAt(at) === STAR && s.charCodeAt(at + 1) === STAR) at += 2;
  const word = wordAt(s, at, to, 'filename') ? 8 : wordAt(s, at, to, 'file') || wordAt(s, at, to, 'path') ? 4 : 0;
  if (!word) return from;
  at = trimmedStart(s, at + word, to);
  if (at >= to || s.charCodeAt(at) !== COLON) return from;
  at = trimmedStart(s, at + 1, to);
  if (at + 2 <= to && s.charCodeAt(at) === STAR && s.charCodeAt(at + 1) === STAR) at += 2;
  return at;
}

/** Does s[at, to) start with `word` (lower-case ASCII letters), in any case? */
function wordAt(s: string, at: number, to: number, word: string): boolean {
  if (at + word.length > to) return false;
  for (let k = 0; k < word.length; k++) if ((s.charCodeAt(at + k) | 0x20) !== word.charCodeAt(k)) return false;
  return true;
}

/** counts[k]: how many line breaks s[0, k) holds. */
function lineBreakCounts(s: string): Int32Array {
  const counts = new Int32Array(s.length + 1);
  for (let k = 0; k < s.length; k++) counts[k + 1] = counts[k]! + (isLineBreak(s.charCodeAt(k)) ? 1 : 0);
  return counts;
}

/** Java insists a public class lives in a file of its name, so a nameless Java block is named after it. */
function javaName(content: string): string | undefined {
  // The first `public` that only blanks separate from the start of a line (blank lines included) and that declares a
  // type. The blanks before each `public` are read once: the runs before two occurrences never overlap.
  for (let at = content.indexOf('public'); at >= 0; at = content.indexOf('public', at + 1)) {
    let start = at;
    while (start > 0 && isBlank(content.charCodeAt(start - 1)) && !isLineBreak(content.charCodeAt(start - 1))) start--;
    if (start > 0 && !isLineBreak(content.charCodeAt(start - 1))) continue;
    JAVA_DECLARATION.lastIndex = at;
    const m = JAVA_DECLARATION.exec(content);
    if (m) return `${m[1]}.java`;
  }
  return undefined;
}

const JAVA_DECLARATION = /public\s+(?:(?:final|abstract|sealed|static)\s+)*(?:class|interface|record|enum)\s+([A-Z]\w*)/y;

interface Fence { indent: number; run: string; info: string }

/** Up to three spaces and three or more backticks or tildes; the info string is the rest of the line. */
const OPENING = /^( {0,3})(`{3,}|~{3,})/;
/** What may follow the opening run's length of marks on a closing line: more of the mark, then only blanks. */
const CLOSING_TAIL = { '`': /`*\s*$/y, '~': /~*\s*$/y } as const;

function openingFence(line: string): Fence | undefined {
  const open = OPENING.exec(line);
  if (!open) return undefined;
  const [whole, spaces, run] = open as unknown as [string, string, string];
  const info = line.slice(whole.length);
  // A backtick fence's info string may not contain backticks (CommonMark), so `inline ```code```` is no fence.
  if (run[0] === '`' && info.includes('`')) return undefined;
  // Nor may it hold a line break that splitting on \n left in (a lone CR, U+2028, U+2029).
  return LINE_BREAK.test(info) ? undefined : { indent: spaces.length, run, info };
}

/** Up to three spaces, at least as many of the fence's marks as opened it, then only blanks. */
function closesFence(line: string, fence: Fence): boolean {
  const indent = leadingSpaces(line);
  if (indent > 3 || !line.startsWith(fence.run, indent)) return false;
  const tail = CLOSING_TAIL[fence.run[0] as '`' | '~'];
  tail.lastIndex = indent + fence.run.length;
  return tail.test(line);
}

/** Leading spaces, counted up to four (four is already too many for a fence). */
function leadingSpaces(line: string): number {
  let n = 0;
  while (n < 4 && line.charCodeAt(n) === 32) n++;
  return n;
}

/**
 * Files from a model's Markdown output. Nameless blocks get a default name
 * by language (the block's, else the request's), numbered when several share
 * it; output with no fence is one file holding everything; a later block at
 * the same path wins. Never returns an empty list.
 */
export function parseFencedFiles(output: string, language: string): GeneratedFile[] {
  const lines = output.split(/\r?\n/);
  const files = new Map<string, string>();
  const defaultsUsed = new Map<string, number>();
  const nextDefault = (base: string): string => {
    for (;;) {
      const n = (defaultsUsed.get(base) ?? 0) + 1;
      defaultsUsed.set(base, n);
      const dot = base.lastIndexOf('.');
      const name = n === 1 ? base : dot > 0 ? `${base.slice(0, dot)}${n}${base.slice(dot)}` : `${base}${n}`;
      // A nameless block must not silently replace a file the output named.
      if (!files.has(name)) return name;
    }
  };
  let previousEnd = 0;
  for (let i = 0; i < lines.length; i++) {
    const fence = openingFence(lines[i]!);
    if (!fence) continue;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !closesFence(lines[j]!, fence); j++) body.push(unindent(lines[j]!, fence.indent));
    const info = readInfo(fence.info);
    const firstLine = readFirstLine(body[0], info.language);
    if (firstLine !== undefined) body.shift();
    // The last non-blank line since the previous block (each line looked at once over the whole answer).
    let before: string | undefined;
    for (let k = i - 1; k >= previousEnd && before === undefined; k--) if (NON_BLANK.test(lines[k]!)) before = lines[k];
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

const BACKTICK = 96;
const STAR = 42;
const COLON = 58;
const NON_BLANK = /\S/;
/** What `.` does not match and where `^` starts a line under the `m` flag. */
const LINE_BREAK = /[\n\r\u2028\u2029]/;

function isLineBreak(c: number): boolean {
  return c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
}

/** What `\s` matches and `String.prototype.trim` removes, by UTF-16 code unit. */
function isBlank(c: number): boolean {
  if (c === 32 || (c >= 9 && c <= 13)) return true;
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** The first index in [from, to) that is not blank, or `to`. */
function trimmedStart(s: string, from: number, to: number): number {
  while (from < to && isBlank(s.charCodeAt(from))) from++;
  return from;
}

/** One past the last index in [from, to) that is not blank, or `from`. */
function trimmedEnd(s: string, from: number, to: number): number {
  while (to > from && isBlank(s.charCodeAt(to - 1))) to--;
  return to;
}
