import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

/** Writes generated files under `dir`; a path that would land outside it is refused. */
export function writeFiles(dir: string, files: Array<{ path: string; content: string }>): string[] {
  const root = resolve(dir);
  const written: string[] = [];
  for (const f of files) {
    const target = resolve(join(root, f.path));
    if (!target.startsWith(root + sep)) throw new Error(`refusing to write outside ${dir}: ${f.path}`);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, f.content);
    written.push(target);
  }
  return written;
}
