/**
 * Projects with history (CONTRACT §12.6, docs/api.md "Project revisions"): file writes and deletes through the
 * API, each a revision; revisions paged newest first with unified diffs; restore; zip downloads checked with
 * `unzip`; hostile paths refused without writing; another account's project a 404 everywhere; the change-set
 * method the engineer run uses; generate into a project as a revision; and migration 0016 on a database with
 * projects made by the previous schema (SQLite, and PostgreSQL when TEST_DATABASE_URL is set).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load-config.js';
import { openDatabase } from '../src/storage/open-database.js';
import { migrationProvider } from '../src/storage/migrations/index.js';
import { startTestServer, nextIp, TEST_DATABASE_URL, uniqueName, type TestServer } from './helpers/test-server.js';
import { createPgSchema, dropPgSchema } from './helpers/pg-schema.js';
import { registerUser, request } from './helpers/http.js';
import type { Principal } from '../src/identity/principal.js';

/** A request whose path goes out byte for byte (fetch would resolve "..", "." and "%2e%2e" before sending). */
function rawRequest(base: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const url = new URL(base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try { parsed = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function download(url: string, token: string): Promise<{ status: number; type: string | null; disposition: string | null; bytes: Buffer }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition'), bytes: Buffer.from(await res.arrayBuffer()) };
}

/** The files of a zip as `unzip` reads them (it checks every CRC with -t first). */
function unzipFiles(zip: Buffer): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'codeloom-zip-'));
  try {
    const file = join(dir, 'a.zip');
    writeFileSync(file, zip);
    expect(execFileSync('unzip', ['-t', file]).toString()).toContain('No errors detected');
    const names = execFileSync('unzip', ['-Z1', file]).toString().split('\n').filter(Boolean);
    return Object.fromEntries(names.map((n) => [n, execFileSync('unzip', ['-p', file, n]).toString('utf8')]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function revisionsSuite(dialect: 'sqlite' | 'postgres') {
  let t: TestServer;
  let token: string;
  const api = (path: string) => `${t.url}/api/v1${path}`;

  beforeAll(async () => { t = await startTestServer({ dialect, env: { CODELOOM_BODY_LIMIT: '65536' } }); });
  afterAll(async () => { await t.close(); });
  beforeEach(async () => { token = (await registerUser(t.url, { ip: nextIp(), name: 'Ada' })).token; });

  const put = (id: string, path: string, content: string, tok = token) => request(api(`/projects/${id}/files/${path}`), { token: tok, method: 'PUT', body: { content } });
  const revisions = async (id: string) => (await request(api(`/projects/${id}/revisions?limit=100`), { token })).body;

  it('writes, deletes and lists: each change a revision, newest first, with unified diffs', async () => {
    const p = (await request(api('/projects'), { token, body: { name: 'history' } })).body;
    let list = await revisions(p.id);
    expect(list.pagination.total).toBe(1);
    expect(list.data[0]).toMatchObject({ number: 1, message: 'Created', files_changed: 0, author: { name: 'Ada' } });
    expect(list.data[0].id).toMatch(/^rev_/);

    const w1 = await put(p.id, 'src/a.ts', 'one\ntwo\nthree\n');
    expect(w1.status, w1.text).toBe(201);
    expect(w1.body).toMatchObject({ number: 2, message: 'Write src/a.ts', files_changed: 1, author: { id: expect.any(String), name: 'Ada' } });
    expect((await request(api(`/projects/${p.id}/files/src/a.ts`), { token })).body.content).toBe('one\ntwo\nthree\n');
    // The same content again: no revision, the latest one back.
    const same = await put(p.id, 'src/a.ts', 'one\ntwo\nthree\n');
    expect(same.status).toBe(200);
    expect(same.body.number).toBe(2);
    const w2 = await put(p.id, 'src/a.ts', 'one\n2\nthree');
    expect(w2.body.number).toBe(3);
    expect((await put(p.id, 'README.md', '# hi\n')).body.number).toBe(4);
    const del = await request(api(`/projects/${p.id}/files/README.md`), { token, method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ number: 5, message: 'Delete README.md', files_changed: 1 });
    expect((await request(api(`/projects/${p.id}/files/README.md`), { token })).status).toBe(404);
    const again = await request(api(`/projects/${p.id}/files/README.md`), { token, method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    expect((await request(api(`/projects/${p.id}`), { token })).body.files_count).toBe(1);

    list = await revisions(p.id);
    expect(list.data.map((r: { number: number }) => r.number)).toEqual([5, 4, 3, 2, 1]);
    const paged = (await request(api(`/projects/${p.id}/revisions?limit=2&page=2`), { token })).body;
    expect(paged.data.map((r: { number: number }) => r.number)).toEqual([3, 2]);
    expect(paged.pagination).toEqual({ page: 2, limit: 2, total: 5, total_pages: 3 });

    const r2 = (await request(api(`/projects/${p.id}/revisions/2`), { token })).body;
    expect(r2.files).toEqual([{ path: 'src/a.ts', status: 'added', size: 14, diff: '--- /dev/null\n+++ b/src/a.ts\n@@ -0,0 +1,3 @@\n+one\n+two\n+three\n' }]);
    const r3 = (await request(api(`/projects/${p.id}/revisions/3`), { token })).body;
    expect(r3.files[0]).toMatchObject({ path: 'src/a.ts', status: 'modified', size: 11 });
    expect(r3.files[0].diff).toBe('--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n one\n-two\n-three\n+2\n+three\n\\ No newline at end of file\n');
    const r5 = (await request(api(`/projects/${p.id}/revisions/5`), { token })).body;
    expect(r5.files).toEqual([{ path: 'README.md', status: 'deleted', size: null, diff: '--- a/README.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# hi\n' }]);
    for (const rev of ['6', '0', 'x', '-1', '1.5']) {
      const res = await request(api(`/projects/${p.id}/revisions/${rev}`), { token });
      expect(res.status, rev).toBe(rev === '6' ? 404 : 400);
    }
  });

  it('restores an earlier revision as a new one, and downloads any revision as a zip', async () => {
    const p = (await request(api('/projects'), { token, body: { name: 'Todo API (v2)', template: 'node-cli' } })).body;
    const template = (await request(api(`/projects/${p.id}/files?limit=100`), { token })).body.data.map((f: { path: string }) => f.path).sort();
    const first = (await revisions(p.id)).data[0];
    expect(first).toMatchObject({ number: 1, message: 'Created from template node-cli', files_changed: template.length });
    const original = Object.fromEntries(await Promise.all(template.map(async (path: string) => [path, (await request(api(`/projects/${p.id}/files/${path}`), { token })).body.content])));

    await put(p.id, 'src/extra.ts', 'export const x = 1;\n');
    await put(p.id, template[0], 'changed\n');
    await request(api(`/projects/${p.id}/files/${template[1]}`), { token, method: 'DELETE' });
    expect((await revisions(p.id)).pagination.total).toBe(4);

    const restored = await request(api(`/projects/${p.id}/revisions/1/restore`), { token, method: 'POST' });
    expect(restored.status, restored.text).toBe(201);
    expect(restored.body).toMatchObject({ number: 5, message: 'Restore revision 1', files_changed: 3 });
    const detail = (await request(api(`/projects/${p.id}/revisions/5`), { token })).body;
    expect(detail.files.map((f: { path: string; status: string }) => [f.path, f.status])).toEqual(
      [[template[0], 'modified'], [template[1], 'added'], ['src/extra.ts', 'deleted']].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)));
    const now = (await request(api(`/projects/${p.id}/files?limit=100`), { token })).body.data.map((f: { path: string }) => f.path).sort();
    expect(now).toEqual(template);
    for (const path of template) expect((await request(api(`/projects/${p.id}/files/${path}`), { token })).body.content).toBe(original[path]);
    // Nothing differs from revision 1 now: no new revision.
    const noop = await request(api(`/projects/${p.id}/revisions/1/restore`), { token, method: 'POST' });
    expect(noop.status).toBe(200);
    expect(noop.body.number).toBe(5);
    expect((await request(api(`/projects/${p.id}/revisions/9/restore`), { token, method: 'POST' })).status).toBe(404);

    // Zips: revision 1 (the template), revision 2 (plus src/extra.ts), the current files.
    const z1 = await download(api(`/projects/${p.id}/revisions/1/archive`), token);
    expect(z1.status).toBe(200);
    expect(z1.type).toBe('application/zip');
    expect(z1.disposition).toBe('attachment; filename="Todo-API-v2-r1.zip"');
    expect(unzipFiles(z1.bytes)).toEqual(original);
    const z2 = await download(api(`/projects/${p.id}/revisions/2/archive`), token);
    expect(unzipFiles(z2.bytes)).toEqual({ ...original, 'src/extra.ts': 'export const x = 1;\n' });
    const z3 = unzipFiles((await download(api(`/projects/${p.id}/revisions/3/archive`), token)).bytes);
    expect(z3[template[0]]).toBe('changed\n');
    const current = await download(api(`/projects/${p.id}/archive`), token);
    expect(current.disposition).toBe('attachment; filename="Todo-API-v2.zip"');
    expect(unzipFiles(current.bytes)).toEqual(original);
    expect((await download(api(`/projects/${p.id}/revisions/7/archive`), token)).status).toBe(404);
  });

  it('refuses hostile and unnormalised paths with 400 and writes nothing; bodies past the limit are 413', async () => {
    const p = (await request(api('/projects'), { token, body: { name: 'paths' } })).body;
    const hostile = ['%2e%2e/x', '..%2fx', 'a/%2e%2e/%2e%2e/etc/passwd', 'a/../b', './a', 'a/./b', 'a//b', 'a/', '/etc/passwd', 'a%5Cb', '..%5C..%5Cx', 'a%00b', 'C:/x', 'a%0Ab', `${'d/'.repeat(250)}x`];
    for (const path of hostile) {
      const res = await rawRequest(t.url, 'PUT', `/api/v1/projects/${p.id}/files/${path}`, token, { content: 'x' });
      expect(res.status, `${path} ${JSON.stringify(res.body).slice(0, 200)}`).toBe(400);
      expect(res.body.code, path).toBe('validation_failed');
      const gone = await rawRequest(t.url, 'DELETE', `/api/v1/projects/${p.id}/files/${path}`, token);
      expect(gone.status, path).toBe(400);
    }
    // Named as the path's fault.
    const dotdot = await rawRequest(t.url, 'PUT', `/api/v1/projects/${p.id}/files/a/%2e%2e/b`, token, { content: 'x' });
    expect(dotdot.status).toBe(400);
    expect(dotdot.body.errors[0].path).toBe('/path');
    expect((await revisions(p.id)).pagination.total).toBe(1);
    expect((await request(api(`/projects/${p.id}/files`), { token })).body.pagination.total).toBe(0);

    // Body limits: CODELOOM_BODY_LIMIT (64 KiB here) bounds a file; a body missing content is a 400.
    const big = await put(p.id, 'big.txt', 'x'.repeat(70_000));
    expect(big.status).toBe(413);
    expect((await put(p.id, 'fits.txt', 'x'.repeat(60_000))).status).toBe(201);
    for (const body of [{}, { content: 1 }, { content: 'x', extra: true }]) {
      expect((await request(api(`/projects/${p.id}/files/y.txt`), { token, method: 'PUT', body })).status, JSON.stringify(body)).toBe(400);
    }
    // Names that are fine: unicode, dots inside names, dotfiles, deep paths.
    for (const path of ['.github/workflows/ci.yml', 'src/ünïcode.ts', 'a.b.c/..d', 'x/y/z/w.txt']) {
      const res = await put(p.id, encodeURI(path), path);
      expect(res.status, path).toBe(201);
      expect((await request(api(`/projects/${p.id}/files/${encodeURI(path)}`), { token })).body.content).toBe(path);
    }
  });

  it("another account's project is a 404 on every route, and nothing changes", async () => {
    const p = (await request(api('/projects'), { token, body: { name: 'mine', template: 'node-cli' } })).body;
    await put(p.id, 'a.txt', 'a\n');
    const other = (await registerUser(t.url, { ip: nextIp() })).token;
    const calls: Array<[string, string, unknown?]> = [
      ['PUT', `/projects/${p.id}/files/a.txt`, { content: 'stolen' }], ['PUT', `/projects/${p.id}/files/%2e%2e/x`, { content: 'x' }],
      ['DELETE', `/projects/${p.id}/files/a.txt`], ['GET', `/projects/${p.id}/revisions`], ['GET', `/projects/${p.id}/revisions/1`],
      ['POST', `/projects/${p.id}/revisions/1/restore`], ['GET', `/projects/${p.id}/revisions/1/archive`], ['GET', `/projects/${p.id}/archive`],
    ];
    for (const [method, path, body] of calls) {
      const res = await rawRequest(t.url, method, `/api/v1${path}`, other, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code, `${method} ${path}`).toBe('not_found');
    }
    expect((await revisions(p.id)).pagination.total).toBe(2);
    expect((await request(api(`/projects/${p.id}/files/a.txt`), { token })).body.content).toBe('a\n');
  });

  it('saveRevision applies a change set as one revision (the engineer run\'s interface); saveFiles and generate make revisions too', async () => {
    const me = await registerUser(t.url, { ip: nextIp(), name: 'Engineer' });
    const p = (await request(api('/projects'), { token: me.token, body: { name: 'changes' } })).body;
    const row = await t.server.ctx.store.handle.db.selectFrom('projects').select('environment').where('id', '=', p.id).executeTakeFirstOrThrow();
    const principal = { type: 'session', user: { id: me.user.id, email: me.email, name: me.user.name }, environment: row.environment } as unknown as Principal;
    const projects = t.server.ctx.projects;
    await put(p.id, 'keep.txt', 'k\n', me.token);
    await put(p.id, 'old.txt', 'o\n', me.token);
    await put(p.id, 'edit.txt', 'e\n', me.token);

    const rev = await projects.saveRevision(principal, p.id, [
      { path: 'new/file.ts', status: 'added', content: 'export {};\n' },
      { path: 'edit.txt', status: 'modified', content: 'E\n' },
      { path: 'old.txt', status: 'deleted' },
      { path: 'keep.txt', status: 'modified', content: 'k\n' }, // unchanged: left out
      { path: 'never.txt', status: 'deleted' }, // not there: left out
    ], 'engineer: fix the tests');
    expect(rev).toMatchObject({ number: 5, message: 'engineer: fix the tests', files_changed: 3, author: { id: me.user.id, name: 'Engineer' } });
    const detail = await projects.getRevision(principal, p.id, 5);
    expect(detail.files.map((f) => [f.path, f.status])).toEqual([['edit.txt', 'modified'], ['new/file.ts', 'added'], ['old.txt', 'deleted']]);
    expect(detail.files[0]!.diff).toBe('--- a/edit.txt\n+++ b/edit.txt\n@@ -1 +1 @@\n-e\n+E\n');
    // Nothing left to change: no revision.
    expect(await projects.saveRevision(principal, p.id, [{ path: 'keep.txt', status: 'modified', content: 'k\n' }], 'noop')).toBeNull();
    // Hostile paths and missing content: 400 naming each entry; nothing applied.
    const bad = await projects.saveRevision(principal, p.id, [
      { path: '../escape', status: 'added', content: 'x' }, { path: 'ok.txt', status: 'added' }, { path: '/abs', status: 'deleted' }, { path: 'fine.txt', status: 'added', content: 'y' },
    ], 'bad').catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'validation_failed' });
    expect((bad as { extra: { errors: Array<{ path: string }> } }).extra.errors.map((e) => e.path)).toEqual(['/changes/0/path', '/changes/1/content', '/changes/2/path']);
    expect((await request(api(`/projects/${p.id}/revisions`), { token: me.token })).body.pagination.total).toBe(5);
    expect((await request(api(`/projects/${p.id}/files/fine.txt`), { token: me.token })).status).toBe(404);
    // Another account's project: 404, as on the routes.
    const stranger = { ...principal, user: { id: 'usr_nobody', email: 'x@example.com', name: 'X' } } as Principal;
    await expect(projects.saveRevision(stranger, p.id, [{ path: 'a', status: 'added', content: 'a' }], 'x')).rejects.toMatchObject({ code: 'not_found' });

    // Generate with project_id: the files land as one revision.
    const gen = await request(api('/generate'), { token: me.token, body: { prompt: 'todo API', model: 'sandbox', project_id: p.id } });
    expect(gen.status, gen.text).toBe(200);
    const afterGen = (await request(api(`/projects/${p.id}/revisions`), { token: me.token })).body.data[0];
    expect(afterGen).toMatchObject({ number: 6, message: 'Saved generated files', files_changed: gen.body.files.length });
  });

  it('concurrent writes to one project are numbered one after the other, none lost', async () => {
    const p = (await request(api('/projects'), { token, body: { name: 'busy' } })).body;
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => put(p.id, `f${i}.txt`, `${i}\n`)));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(results.map((r) => r.body.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
    const list = await revisions(p.id);
    expect(list.data.map((r: { number: number }) => r.number)).toEqual(Array.from({ length: 13 }, (_, i) => 13 - i));
    expect((await request(api(`/projects/${p.id}`), { token })).body.files_count).toBe(12);
    // Each revision holds exactly its own file.
    for (const r of results) {
      const detail = (await request(api(`/projects/${p.id}/revisions/${r.body.number}`), { token })).body;
      expect(detail.files).toHaveLength(1);
      expect(`Write ${detail.files[0].path}`).toBe(r.body.message);
    }
  });
}

describe('project revisions on SQLite', () => { revisionsSuite('sqlite'); });
describe.runIf(TEST_DATABASE_URL)('project revisions on PostgreSQL', () => { revisionsSuite('postgres'); });

/**
 * Migration 0016 on a database with data: projects (one from a template, then edited by generate; one empty)
 * are made, the database goes back to before 0016, and the next start gives each project revision 1 holding
 * its current files; new writes number from 2.
 */
function migrationSuite(dialect: 'sqlite' | 'postgres') {
  it('existing projects get an initial revision from their current files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codeloom-rev-'));
    const pgSchema = dialect === 'postgres' ? uniqueName('rev') : undefined;
    if (pgSchema) await createPgSchema(pgSchema);
    const database = pgSchema ? { pgSchema } : { sqliteFile: join(dir, 'codeloom.db') };
    const env = {
      HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', CODELOOM_ARGON2_MEMORY_KIB: '1024', CODELOOM_TRUST_PROXY: 'true', CODELOOM_ISSUER: 'http://codeloom.test',
      ...(pgSchema ? { DATABASE_URL: TEST_DATABASE_URL! } : {}),
    };
    const start = async () => {
      const server = await buildApp(loadConfig(env), { database, redisPrefix: `${uniqueName('rev')}:` });
      return { server, url: await server.app.listen({ host: '127.0.0.1', port: 0 }) };
    };
    try {
      const first = await start();
      const { token } = await registerUser(first.url, { ip: nextIp() });
      const withFiles = (await request(`${first.url}/api/v1/projects`, { token, body: { name: 'old', template: 'python-package' } })).body;
      const gen = await request(`${first.url}/api/v1/generate`, { token, body: { prompt: 'todo API', model: 'sandbox', project_id: withFiles.id } });
      expect(gen.status, gen.text).toBe(200);
      const empty = (await request(`${first.url}/api/v1/projects`, { token, body: { name: 'empty' } })).body;
      const paths = (await request(`${first.url}/api/v1/projects/${withFiles.id}/files?limit=100`, { token })).body.data.map((f: { path: string }) => f.path);
      const contents = Object.fromEntries(await Promise.all(paths.map(async (path: string) => [path, (await request(`${first.url}/api/v1/projects/${withFiles.id}/files/${path}`, { token })).body.content])));
      await first.server.close();

      const handle = await openDatabase({ ...(pgSchema ? { databaseUrl: TEST_DATABASE_URL!, pgSchema } : { sqliteFile: database.sqliteFile! }) });
      const migrator = new Migrator({ db: handle.db, provider: migrationProvider, ...(handle.schema ? { migrationTableSchema: handle.schema } : {}) });
      const down = await migrator.migrateTo('0015-password-resets');
      expect(down.error).toBeUndefined();
      expect(down.results?.map((r) => r.migrationName).at(-1)).toBe('0016-project-revisions');
      const tables = (await handle.db.introspection.getTables()).map((x) => x.name);
      expect(tables).toContain('project_files');
      expect(tables).not.toContain('project_revisions');
      await handle.close();

      const second = await start();
      try {
        const base = `${second.url}/api/v1/projects`;
        const list = (await request(`${base}/${withFiles.id}/revisions`, { token })).body;
        expect(list.pagination.total).toBe(1);
        expect(list.data[0]).toMatchObject({ number: 1, message: 'Initial revision', author: null, files_changed: paths.length });
        const r1 = (await request(`${base}/${withFiles.id}/revisions/1`, { token })).body;
        expect(r1.files.map((f: { path: string }) => f.path).sort()).toEqual([...paths].sort());
        for (const f of r1.files) {
          expect(f.status).toBe('added');
          expect(f.size).toBe(Buffer.byteLength(contents[f.path]));
          expect(f.diff.startsWith(`--- /dev/null\n+++ b/${f.path}\n`)).toBe(true);
        }
        expect((await request(`${base}/${empty.id}/revisions`, { token })).body.data).toEqual([expect.objectContaining({ number: 1, files_changed: 0 })]);
        const zip = await fetch(`${base}/${withFiles.id}/revisions/1/archive`, { headers: { authorization: `Bearer ${token}` } });
        expect(unzipFiles(Buffer.from(await zip.arrayBuffer()))).toEqual(contents);
        const w = await request(`${base}/${withFiles.id}/files/${paths[0]}`, { token, method: 'PUT', body: { content: 'new\n' } });
        expect(w.status).toBe(201);
        expect(w.body.number).toBe(2);
        const restored = await request(`${base}/${withFiles.id}/revisions/1/restore`, { token, method: 'POST' });
        expect(restored.body.number).toBe(3);
        expect((await request(`${base}/${withFiles.id}/files/${paths[0]}`, { token })).body.content).toBe(contents[paths[0]]);
      } finally {
        await second.server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (pgSchema) await dropPgSchema(pgSchema);
    }
  });
}

describe('migration 0016 on SQLite', () => { migrationSuite('sqlite'); });
describe.runIf(TEST_DATABASE_URL)('migration 0016 on PostgreSQL', () => { migrationSuite('postgres'); });
