/** The SDK's project history methods against a real server: files.write/delete, revisions.page/get/restore/archive (a zip, read with unzip). */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeloomError } from '../src/index.js';
import { newUser, startTestServer, type TestServer } from './helpers.js';

describe('projects: files and revisions (SDK)', () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer(); });
  afterAll(async () => { await t.close(); });

  it('writes and deletes files as revisions, reads diffs, restores, and downloads zips', async () => {
    const { client } = await newUser(t);
    const p = await client.projects.create({ name: 'sdk history' });
    const w = await client.projects.files.write(p.id, 'src/a b.ts', 'export const a = 1;\n');
    expect(w).toMatchObject({ number: 2, files_changed: 1, message: 'Write src/a b.ts' });
    expect((await client.projects.files.get(p.id, 'src/a b.ts')).content).toBe('export const a = 1;\n');
    expect((await client.projects.files.write(p.id, 'src/a b.ts', 'export const a = 2;\n')).number).toBe(3);
    expect((await client.projects.files.delete(p.id, 'src/a b.ts')).number).toBe(4);
    const page = await client.projects.revisions.page(p.id, 1, { limit: 2 });
    expect(page.data.map((r) => r.number)).toEqual([4, 3]);
    expect(page.pagination.total).toBe(4);
    const all = [];
    for await (const r of client.projects.revisions.list(p.id, { limit: 1 })) all.push(r.number);
    expect(all).toEqual([4, 3, 2, 1]);
    const r3 = await client.projects.revisions.get(p.id, 3);
    expect(r3.files).toEqual([{ path: 'src/a b.ts', status: 'modified', size: 20, diff: '--- a/src/a b.ts\n+++ b/src/a b.ts\n@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;\n' }]);
    const restored = await client.projects.revisions.restore(p.id, 2);
    expect(restored).toMatchObject({ number: 5, message: 'Restore revision 2' });

    const zip = await client.projects.revisions.archive(p.id, 3);
    expect(zip).toBeInstanceOf(Uint8Array);
    const current = await client.projects.revisions.archive(p.id);
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-sdkzip-'));
    try {
      writeFileSync(join(dir, 'r3.zip'), zip);
      writeFileSync(join(dir, 'now.zip'), current);
      expect(execFileSync('unzip', ['-p', join(dir, 'r3.zip'), 'src/a b.ts']).toString()).toBe('export const a = 2;\n');
      expect(execFileSync('unzip', ['-p', join(dir, 'now.zip'), 'src/a b.ts']).toString()).toBe('export const a = 1;\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Errors are problem documents, the bytes path included; bad arguments are refused before any request.
    const missing = await client.projects.revisions.archive(p.id, 99).catch((e: unknown) => e);
    expect(CodeloomError.isInstance(missing) && missing.status === 404 && missing.code === 'not_found').toBe(true);
    expect(() => client.projects.files.write(p.id, 'a/./b', 'x')).toThrow(TypeError);
    expect(() => client.projects.files.delete(p.id, '../b')).toThrow(TypeError);
    const bad = await client.projects.files.write(p.id, 'a//b', 'x').catch((e: unknown) => e);
    expect(CodeloomError.isInstance(bad) && bad.status === 400 && bad.code === 'validation_failed').toBe(true);
    expect(() => client.projects.revisions.get(p.id, 0)).toThrow(TypeError);
    expect(() => client.projects.revisions.get(p.id, 1.5)).toThrow(TypeError);
    const stranger = (await newUser(t)).client;
    const hidden = await stranger.projects.revisions.page(p.id, 1).catch((e: unknown) => e);
    expect(CodeloomError.isInstance(hidden) && hidden.status === 404).toBe(true);
  });
});
