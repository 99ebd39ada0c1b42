import { SETTINGS, type SettingDef } from './config-schema.js';

/** The text of docs/config.md, generated from the settings table. */
export function renderConfigDoc(): string {
  const rows = (SETTINGS as readonly SettingDef[]).map((s) => {
    const def = s.default !== undefined ? `\`${s.default}\`` : '—';
    const range = s.kind === 'int' && s.min !== undefined ? ` (${s.min}–${s.max})` : s.kind === 'enum' ? ` (${s.values?.join(', ')})` : '';
    return `| \`${s.env}\` | ${s.kind}${range} | ${def} | ${s.doc.replace(/\|/g, '\\|')} |`;
  });
  return [
    '# Configuration',
    '',
    'Codeloom reads its settings from environment variables only, once, at start.',
    'A bad value stops the server with every problem listed. This page is generated',
    'from `packages/server/src/config/config-schema.ts` by `npm run docs:config`.',
    '',
    '| variable | type | default | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
