// npm run docs:config: regenerate docs/config.md from the settings table.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildIfNeeded, root } from './build-if-needed.mjs';

buildIfNeeded();
const { renderConfigDoc } = await import('../packages/server/dist/config/render-config-doc.js');
writeFileSync(join(root, 'docs/config.md'), renderConfigDoc());
console.log('wrote docs/config.md');
