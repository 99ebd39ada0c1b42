import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@codeloom/protocol';
import { renderConfigDoc } from '../src/config/render-config-doc.js';
import { TEMPLATES } from '../src/modules/templates/template-catalog.js';

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
