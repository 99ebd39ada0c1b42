import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crc32, zipFiles } from './zip-writer.js';

describe('zipFiles', () => {
  it('crc32 matches the standard check value', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
  });

  it('makes archives that unzip tests and extracts as written (deflated, stored, empty, UTF-8 names)', () => {
    const files = [
      { path: 'README.md', content: '# hello\n'.repeat(200) },
      { path: 'src/ünï/côde.ts', content: 'export const x = "ü";\n' },
      { path: 'empty.txt', content: '' },
      { path: 'r', content: 'x' },
    ];
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-zipw-'));
    try {
      const zip = join(dir, 'a.zip');
      writeFileSync(zip, zipFiles(files, new Date('2026-01-02T03:04:06Z')));
      expect(execFileSync('unzip', ['-t', zip]).toString()).toContain('No errors detected in compressed data');
      expect(execFileSync('unzip', ['-Z1', zip]).toString().split('\n').filter(Boolean)).toEqual(files.map((f) => f.path));
      for (const f of files) expect(execFileSync('unzip', ['-p', zip, f.path]).toString('utf8')).toBe(f.content);
      expect(execFileSync('unzip', ['-Z', zip]).toString()).toMatch(/defN.*README\.md/);
      // An empty archive is valid too.
      writeFileSync(zip, zipFiles([]));
      expect(zipFiles([]).length).toBe(22);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
