import type { GeneratedFile } from '@codeloom/protocol';
import { lookupTable } from '@codeloom/protocol';

/**
 * Recovers files from a model's raw Markdown. Models name files in several
 * ways and none is universal, so every common convention is accepted, in
 * this order of trust: a path in the fence's info string, a "file:" comment
 * on the block's first line, a heading/bold/backticked path on the line just
 * before the fence. What cannot be named safely gets a default name, so a
 * hostile or sloppy output can never write outside the project.
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
export function parseFencedFiles(output: string, language: string): GeneratedFile[] {
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
