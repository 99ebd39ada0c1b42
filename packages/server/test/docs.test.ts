import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@codeloom/protocol';
import { renderConfigDoc } from '../src/config/render-config-doc.js';
import { TEMPLATES } from '../src/modules/templates/template-catalog.js';
import { registerUser, request } from './helpers/http.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

const doc = (name: string) => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

describe('documentation stays true', () => {
  it('docs/errors.md lists every error code of the registry with its status, and no other', () => {
    const rows = [...doc('errors.md').matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[2], Number(m[1])]);
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(ERROR_CODES).map(([code, e]) => [code, e.status])));
  });

  it('docs/config.md is the generated settings table (run npm run docs:config)', () => {
    expect(doc('config.md')).toBe(renderConfigDoc());
  });

  it('the README\'s curl walkthrough and CLI section register different accounts (so both run in sequence)', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const curl = /auth\/register[^\n]*\n[^\n]*"email":"([^"]+)"/.exec(readme)?.[1];
    const cli = /codeloom register --email (\S+)/.exec(readme)?.[1];
    expect(curl).toBeTruthy();
    expect(cli).toBeTruthy();
    expect(cli).not.toBe(curl);
  });

  it('docs/api.md names every starter template, and the client README a file the template it uses really has', () => {
    const row = doc('api.md').split('\n').find((l) => l.startsWith('| `GET /api/v1/templates` |'))!;
    expect([...row.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]).filter((id) => id !== 'GET')).toEqual(TEMPLATES.map((t) => t.id));
    const readme = readFileSync(new URL('../../client/README.md', import.meta.url), 'utf8');
    const [, template] = /template: '([a-z0-9-]+)'/.exec(readme)!;
    const [, path] = /projects\.files\.get\(project\.id, '([^']+)'\)/.exec(readme)!;
    expect(TEMPLATES.find((t) => t.id === template)!.files.map((f) => f.path)).toContain(path);
  });
});

// The docs runner (issue 29 item 5): every fenced shell block marked runnable in README.md and
// docs/*.md runs against a started server, so the commands the docs show cannot drift. A block is
// runnable when the line before its fence is `<!-- runnable -->` (invisible on GitHub) and the fence
// is ```sh or ```bash. docs/testing.md ("Runnable docs") says what each block gets.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI_MAIN = join(ROOT, 'packages/cli/dist/main.js');
const RUNNABLE = '<!-- runnable -->';
/** What a runnable block is told to use, besides its own scratch directory as HOME and working directory. */
const PASSWORD = 'correct horse battery';

interface Block { file: string; line: number; code: string }

/** The runnable blocks of one Markdown file, in order. A marker that is not followed by a sh/bash fence is an error. */
function runnableBlocks(file: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== RUNNABLE) continue;
    const fence = /^(`{3,})(sh|bash)\s*$/.exec(lines[i + 1] ?? '');
    if (!fence) throw new Error(`${file}:${i + 1}: ${RUNNABLE} must be followed by a \`\`\`sh or \`\`\`bash fence`);
    const end = lines.findIndex((l, j) => j > i + 1 && l.trim() === fence[1]);
    if (end < 0) throw new Error(`${file}:${i + 2}: the runnable block is not closed`);
    blocks.push({ file, line: i + 2, code: lines.slice(i + 2, end).join('\n') });
    i = end;
  }
  return blocks;
}

const DOC_FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const BLOCKS = DOC_FILES.flatMap((f) => runnableBlocks(f, readFileSync(join(ROOT, f), 'utf8')));

function runBlock(code: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', code], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const timer = setTimeout(() => { output += `\n[killed after ${timeoutMs} ms]`; child.kill('SIGKILL'); }, timeoutMs);
    child.on('close', (status) => { clearTimeout(timer); resolve({ status, output }); });
    child.stdin.end(`${PASSWORD}\n`); // commands that prompt for a password read one line of standard input
  });
}

describe('runnable docs: the marked shell blocks of README.md and docs/*.md run against a server', () => {
  let t: TestServer;
  let scratch: string;
  let env: Record<string, string>;
  const dirs = new Map<string, string>();

  beforeAll(async () => {
    t = await startTestServer();
    scratch = mkdtempSync(join(tmpdir(), 'codeloom-docs-'));
    // The runner's own account (pro plan, so a file's blocks fit in its minute) and an API key of it.
    const who = await registerUser(t.url, { email: 'docs-runner@example.com' });
    await t.server.ctx.store.accounts.setPlanByEmail(who.email, 'pro');
    const key = await request(`${t.url}/api/v1/api-keys`, { token: who.token, body: { name: 'docs runner' } });
    expect(key.status).toBe(201);
    // `codeloom` is the built CLI; curl fails on an HTTP error (--fail-with-body), so a 4xx or 5xx fails its block.
    const bin = join(scratch, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'codeloom'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_MAIN}" "$@"\n`);
    const curl = spawnSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).stdout.trim();
    expect(curl, 'curl is installed').toMatch(/^\//);
    writeFileSync(join(bin, 'curl'), `#!/bin/sh\nexec ${curl} --fail-with-body "$@"\n`);
    for (const f of ['codeloom', 'curl']) chmodSync(join(bin, f), 0o755);
    env = {
      PATH: `${bin}:${process.env.PATH}`,
      LANG: 'C.UTF-8',
      BASE: t.url,
      CODELOOM_URL: t.url,
      CODELOOM_BASE_URL: t.url,
      TOKEN: who.token,
      KEY: key.body.key,
      CODELOOM_API_KEY: key.body.key,
    };
  });

  afterAll(async () => {
    await t?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('finds the runnable blocks (README\'s curl walkthrough and CLI section among them)', () => {
    expect(BLOCKS.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(2);
    expect(BLOCKS.some((b) => b.code.includes('auth/register'))).toBe(true);
    expect(BLOCKS.some((b) => /^codeloom register /m.test(b.code))).toBe(true);
    expect(() => runnableBlocks('x.md', `${RUNNABLE}\n\`\`\`ts\nlet x;\n\`\`\`\n`)).toThrow(/must be followed/);

  });

  it('a block fails on a failing command, an HTTP error from curl, or a failed pipe', async () => {
    expect((await runBlock('set -eo pipefail\nfalse\ntrue', scratch, env, 10_000)).status).not.toBe(0);
    const notFound = await runBlock('set -eo pipefail\ncurl -s $BASE/api/v1/no-such-route', scratch, env, 10_000);
    expect(notFound.status).not.toBe(0);
    expect(notFound.output).toMatch(/not_found/);
    expect((await runBlock('set -eo pipefail\ncurl -s $BASE/api/v1/auth/verify -H "authorization: Bearer $KEY" | node -e "process.exit(3)"', scratch, env, 10_000)).status).toBe(3);
    expect((await runBlock('set -eo pipefail\ncurl -s $BASE/api/v1/auth/verify -H "authorization: Bearer $KEY"', scratch, env, 10_000)).status).toBe(0);
  });

  it.each(BLOCKS.map((b) => [`${b.file}:${b.line}`, b] as const))('%s exits 0', async (_, block) => {
    // One scratch directory per document: its blocks run in order there (files one writes, the next may read).
    let cwd = dirs.get(block.file);
    if (!cwd) {
      cwd = join(scratch, block.file.replace(/[/.]/g, '_'));
      mkdirSync(cwd);
      dirs.set(block.file, cwd);
    }
    // The docs say http://127.0.0.1:8080 (npm start's address): here it is the test server.
    const code = block.code.replaceAll('http://127.0.0.1:8080', t.url).replaceAll('http://localhost:8080', t.url).replaceAll('ws://127.0.0.1:8080', t.url.replace('http', 'ws'));
    const { status, output } = await runBlock(`set -eo pipefail\n${code}`, cwd, { ...env, HOME: cwd }, 90_000);
    if (status !== 0) throw new Error(`${block.file}:${block.line} exited ${status}\n--- block ---\n${block.code}\n--- output ---\n${output.slice(-6000)}`);
  }, 120_000);
});
