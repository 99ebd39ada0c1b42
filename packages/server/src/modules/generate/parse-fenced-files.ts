import type { GeneratedFile } from '@codeloom/protocol';

const DEFAULT_NAMES: Record<string, string> = {
  typescript: 'main.ts', javascript: 'main.js', python: 'main.py', java: 'Main.java', go: 'main.go', rust: 'main.rs',
  c: 'main.c', cpp: 'main.cpp', csharp: 'Program.cs', ruby: 'main.rb', php: 'index.php', kotlin: 'Main.kt', swift: 'main.swift',
  bash: 'main.sh', sql: 'schema.sql', html: 'index.html', markdown: 'README.md', json: 'data.json', yaml: 'config.yaml',
};

/** The file name a nameless block of this language gets. */
export function defaultFileName(language: string): string {
  return DEFAULT_NAMES[language.toLowerCase()] ?? 'main.txt';
}

const PATH_LIKE = /^[\w@.+-][\w@.+/-]*\.[\w+-]+$|^\.[\w.-]+$|^(Makefile|Dockerfile|README|LICENSE|Procfile)$/;

/** A path we are willing to store: relative, no `..`, no backslashes or control characters. */
export function safePath(candidate: string | undefined): string | undefined {
  if (!candidate) return undefined;
  const p = candidate.trim().replace(/^["'`]|["'`]$/g, '').replace(/^\.\//, '');
  if (!p || p.length > 300 || p.startsWith('/') || p.includes('\\') || /[\u0000-\u001f]/.test(p)) return undefined;
  if (p.split('/').some((seg) => seg === '..' || seg === '' || seg === '.')) return undefined;
  return PATH_LIKE.test(p.split('/').pop()!) ? p : undefined;
}

function pathFromInfo(info: string): string | undefined {
  const attr = /(?:title|filename|file|path)\s*=\s*"?([^"\s]+)"?/i.exec(info);
  if (attr) return safePath(attr[1]);
  const [, second] = info.trim().split(/\s+/);
  if (second) return safePath(second);
  // A lone info word that looks like a file name (```app.py) names the file; a lone language (```ts) does not.
  const [only] = info.trim().split(/\s+/);
  return only && /\.[A-Za-z0-9]+$/.test(only) ? safePath(only) : undefined;
}

function pathFromLineBefore(line: string | undefined): string | undefined {
  if (!line) return undefined;
  const m = /^\s*(?:#{1,6}\s*|\*\*|`|File:\s*|file:\s*)?\s*`?([^\s`*:]+)`?\*{0,2}:?\s*$/.exec(line);
  return m ? safePath(m[1]) : undefined;
}

const FIRST_LINE_NAME = /^\s*(?:\/\/|#|--|<!--|\/\*)\s*(?:file(?:name)?|path)\s*:\s*(\S+?)\s*(?:-->|\*\/)?\s*$/i;

/**
 * Files from a model's Markdown: fenced blocks named by their info string
 * (```ts src/app.ts, title="app.py", filename=…), by a first-line comment
 * (// file: src/a.ts), or by a heading, bold or backticked path just before
 * the fence. Nameless blocks get a default name by language; output with no
 * fence is one file. A later block at the same path wins. Never empty.
 */
export function parseFencedFiles(output: string, language: string): GeneratedFile[] {
  const lines = output.split('\n');
  const files = new Map<string, string>();
  let unnamed = 0;
  const fallback = () => {
    unnamed += 1;
    const base = defaultFileName(language);
    if (unnamed === 1) return base;
    const dot = base.lastIndexOf('.');
    return dot > 0 ? `${base.slice(0, dot)}${unnamed}${base.slice(dot)}` : `${base}${unnamed}`;
  };
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(lines[j]!)) body.push(lines[j++]!);
    let path = pathFromInfo(open[3] ?? '') ?? pathFromLineBefore(lines.slice(0, i).reverse().find((l) => l.trim() !== ''));
    const named = body.length ? FIRST_LINE_NAME.exec(body[0]!) : null;
    if (named && safePath(named[1])) {
      path ??= safePath(named[1]);
      body.shift();
    }
    const content = body.length ? `${body.join('\n')}\n` : '';
    files.set(path ?? fallback(), content);
    i = j;
  }
  if (files.size === 0) return [{ path: defaultFileName(language), content: output }];
  return [...files].map(([path, content]) => ({ path, content }));
}
