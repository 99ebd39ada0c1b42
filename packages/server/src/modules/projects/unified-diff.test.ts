import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from './unified-diff.js';

/** Applies a diff with GNU patch (strict: no fuzz) and returns the file it makes. */
function applyWithPatch(before: string | null, diff: string): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'codeloom-diff-'));
  try {
    const file = join(dir, 'f.txt');
    if (before !== null) writeFileSync(file, before);
    writeFileSync(join(dir, 'd.patch'), diff.replaceAll('a/f.txt', 'f.txt').replaceAll('b/f.txt', 'f.txt'));
    execFileSync('patch', ['--fuzz=0', '--force', '--quiet', '-E', '-d', dir, '-p0', '-i', 'd.patch'], { stdio: 'pipe' });
    try { return readFileSync(file, 'utf8'); } catch { return null; }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A deterministic pseudo-random generator (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('unifiedDiff', () => {
  it('writes the format of diff -u', () => {
    expect(unifiedDiff('f', 'a\n', 'a\n')).toBe('');
    expect(unifiedDiff('f', null, 'x\ny\n')).toBe('--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n');
    expect(unifiedDiff('f', 'x\n', null)).toBe('--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n');
    expect(unifiedDiff('f', 'x', 'x\n')).toBe('--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n');
    const before = Array.from({ length: 20 }, (_, i) => `l${i}\n`).join('');
    const after = before.replace('l2\n', 'L2\n').replace('l17\n', '');
    // Checked against diff -u of the same two files.
    expect(unifiedDiff('f', before, after)).toBe('--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n l0\n l1\n-l2\n+L2\n l3\n l4\n l5\n@@ -15,6 +15,5 @@\n l14\n l15\n l16\n-l17\n l18\n l19\n');
    expect(unifiedDiff('f', before, null)).toContain('@@ -1,20 +0,0 @@');
  });

  it('applies with patch to give the new content, on 60 random edits (and the whole-replacement fallback)', () => {
    const rand = rng(27);
    const words = ['a', 'b', 'c', 'd', 'foo', 'bar', '', '}'];
    const make = (n: number) => Array.from({ length: n }, () => `${words[Math.floor(rand() * words.length)]}\n`).join('');
    for (let i = 0; i < 60; i++) {
      const before = make(Math.floor(rand() * 40));
      const lines = before.split('\n').slice(0, -1);
      for (let e = 0; e < 4; e++) {
        const at = Math.floor(rand() * (lines.length + 1));
        const op = rand();
        if (op < 0.33) lines.splice(at, 1);
        else if (op < 0.66) lines.splice(at, 0, `new${e}`);
        else lines[at] = `changed${e}`;
      }
      let after = lines.filter((l) => l !== undefined).map((l) => `${l}\n`).join('');
      if (rand() < 0.2) after = after.slice(0, -1); // no newline at the end
      const diff = unifiedDiff('f.txt', before, after);
      if (before === after) { expect(diff).toBe(''); continue; }
      expect(applyWithPatch(before, diff), `case ${i}\n${diff}`).toBe(after);
    }
    const big = Array.from({ length: 3000 }, (_, i) => `${i}\n`).join('');
    const bigAfter = big.replace('10\n', 'ten\n').replace('2990\n', '');
    expect(applyWithPatch(big, unifiedDiff('f.txt', big, bigAfter))).toBe(bigAfter);
  });
});
