/**
 * The package's import graph keeps the layout README.md describes: no
 * cycles, only @codeloom/protocol from outside, one folder per language whose
 * index.ts alone imports the folder's other files (those import only the
 * folder's leaf files such as names.ts), and no language imports another.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [relative(SRC, path)] : [];
  });
}

/** The specifiers of a file's leading import and re-export statements (templates further down hold generated code's imports). */
function specifiers(file: string): string[] {
  const found: string[] = [];
  for (const line of readFileSync(join(SRC, file), 'utf8').split('\n')) {
    if (line.trim() === '' || /^\s*(\/\*\*?|\*|\/\/)/.test(line)) continue;
    const m = /^(?:import|export)\b.* from '([^']+)';$/.exec(line);
    if (!m) break;
    found.push(m[1]!);
  }
  return found;
}

const FILES = sources(SRC);
const resolve = (from: string, spec: string) => join(dirname(from), spec).replace(/\.js$/, '.ts');
const GRAPH = new Map(FILES.map((f) => [f, specifiers(f)]));
const local = (f: string) => GRAPH.get(f)!.filter((s) => s.startsWith('.')).map((s) => resolve(f, s));
/** languages/<lang>/… → <lang>; anything else → undefined. */
const languageOf = (f: string) => /^languages\/([^/]+)\//.exec(f)?.[1];

describe('the sandbox model package layout', () => {
  it('reads every file it imports, and nothing from outside but @codeloom/protocol', () => {
    expect(FILES.length).toBeGreaterThan(40);
    for (const [file, specs] of GRAPH) {
      for (const s of specs.filter((x) => !x.startsWith('.'))) expect(s, file).toBe('@codeloom/protocol');
      for (const target of local(file)) expect(FILES, `${file} imports ${target}`).toContain(target);
    }
  });

  it('has no import cycles', () => {
    const state = new Map<string, 'open' | 'done'>();
    const visit = (f: string, path: string[]): void => {
      if (state.get(f) === 'done') return;
      expect(state.get(f), `cycle: ${[...path, f].join(' → ')}`).not.toBe('open');
      state.set(f, 'open');
      for (const t of local(f)) visit(t, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of FILES) visit(f, []);
  });

  it("keeps each language to its folder: only index.ts imports the folder's non-leaf files, no language imports another", () => {
    for (const file of FILES) {
      const lang = languageOf(file);
      for (const target of local(file)) {
        const other = languageOf(target);
        if (other === undefined) continue;
        if (lang === undefined) {
          expect(file, `${file} imports ${target}`).toBe('languages/index.ts');
          expect(target, `${file} imports ${target}`).toMatch(/\/index\.ts$/);
          continue;
        }
        expect(other, `${file} imports ${target}`).toBe(lang);
        if (!file.endsWith('/index.ts')) expect(local(target).filter((t) => languageOf(t) === lang), `${file} imports ${target}, which is not a leaf`).toEqual([]);
      }
    }
  });

  it('keeps the shared files free of anything language-specific', () => {
    const reaches = (f: string, seen = new Set<string>()): Set<string> => {
      for (const t of local(f)) if (!seen.has(t)) { seen.add(t); reaches(t, seen); }
      return seen;
    };
    const shared = FILES.filter((f) => languageOf(f) === undefined && [...FILES].some((l) => languageOf(l) !== undefined && local(l).includes(f)));
    expect(shared).toEqual(expect.arrayContaining(['project-files.ts', 'prompt-analysis.ts', 'languages/posix-sockets.ts']));
    for (const f of shared) expect([...reaches(f)].filter((t) => languageOf(t) !== undefined || t === 'languages/index.ts'), f).toEqual([]);
  });
});
