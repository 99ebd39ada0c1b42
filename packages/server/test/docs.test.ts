import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@codeloom/protocol';
import { renderConfigDoc } from '../src/config/render-config-doc.js';

const doc = (name: string) => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');

describe('documentation stays true', () => {
  it('docs/errors.md lists every error code of the registry with its status, and no other', () => {
    const rows = [...doc('errors.md').matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[2], Number(m[1])]);
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(ERROR_CODES).map(([code, e]) => [code, e.status])));
  });

  it('docs/config.md is the generated settings table (run npm run docs:config)', () => {
    expect(doc('config.md')).toBe(renderConfigDoc());
  });
});
