import { jsonFile, type ProjectTemplate } from './project-template.js';

const README = `# slugify-lib

A small typed ESM library: turns any text into a URL-safe slug. Built with
\`tsc\` (JavaScript plus \`.d.ts\` declarations in \`dist/\`) and tested with
\`node:test\` on the compiled output, so there is no test runner to install.

\`\`\`ts
import { slugify } from 'slugify-lib';

slugify('Hello, World!');                    // "hello-world"
slugify('Crème brûlée', { separator: '_' }); // "creme_brulee"
slugify('a very long title', { maxLength: 8 }); // "a-very"
\`\`\`

## Develop

\`\`\`sh
npm install
npm test          # type-checks src and test, then runs the compiled tests
npm run build     # dist/index.js and dist/index.d.ts
\`\`\`

## Layout

- \`src/\`: the library; \`tsconfig.build.json\` compiles only this into \`dist/\`.
- \`test/\`: tests; \`tsconfig.json\` compiles them with \`src/\` into \`build/\` for \`node --test\`.
`;

const INDEX = `export interface SlugifyOptions {
  /** Put between words (default "-"). */
  separator?: string;
  /** Longest slug to return; it is cut at a word boundary where possible (default unlimited). */
  maxLength?: number;
}

/** A URL-safe slug: lower-case ASCII letters and digits, words joined by the separator. */
export function slugify(text: string, options: SlugifyOptions = {}): string {
  const separator = options.separator ?? '-';
  const words = text
    .normalize('NFKD')
    .replace(/[\\u0300-\\u036f]/g, '') // NFKD splits "é" into "e" plus a combining accent; drop the accent
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const slug = words.join(separator);
  const max = options.maxLength;
  if (max === undefined || slug.length <= max) return slug;

  let cut = '';
  for (const word of words) {
    const next = cut === '' ? word : cut + separator + word;
    if (next.length > max) break;
    cut = next;
  }
  // A single first word longer than the limit is truncated rather than dropped.
  return cut === '' ? slug.slice(0, max) : cut;
}
`;

const TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { slugify } from '../src/index.js';

test('makes lower-case ASCII slugs', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
  assert.equal(slugify('  Crème   brûlée  '), 'creme-brulee');
  assert.equal(slugify('!!!'), '');
});

test('honours the separator', () => {
  assert.equal(slugify('a b c', { separator: '_' }), 'a_b_c');
});

test('cuts at a word boundary within maxLength', () => {
  assert.equal(slugify('a very long title', { maxLength: 8 }), 'a-very');
  assert.equal(slugify('hello big world', { maxLength: 9 }), 'hello-big');
  assert.equal(slugify('supercalifragilistic', { maxLength: 5 }), 'super');
  assert.equal(slugify('short', { maxLength: 50 }), 'short');
});
`;

const compilerOptions = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  declaration: true,
  sourceMap: true,
  skipLibCheck: true,
  forceConsistentCasingInFileNames: true,
  types: ['node'],
};

export const typescriptLibrary: ProjectTemplate = {
  id: 'typescript-library',
  name: 'TypeScript library',
  description: 'A typed ESM library (slugify) built with tsc into JavaScript and declarations, with node:test tests run on the compiled output.',
  language: 'typescript',
  files: [
    { path: '.gitignore', content: 'node_modules/\ndist/\nbuild/\n*.log\n*.tsbuildinfo\n' },
    jsonFile('package.json', {
      name: 'slugify-lib',
      version: '0.1.0',
      description: 'Turn any text into a URL-safe slug',
      type: 'module',
      engines: { node: '>=20' },
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
      main: './dist/index.js',
      types: './dist/index.d.ts',
      files: ['dist'],
      scripts: {
        build: 'tsc -p tsconfig.build.json',
        test: 'tsc && node --test build/test/*.test.js',
        prepublishOnly: 'npm run build',
      },
      devDependencies: { '@types/node': '^20.19.0', typescript: '~5.9.3' },
    }),
    jsonFile('tsconfig.json', { compilerOptions: { ...compilerOptions, rootDir: '.', outDir: 'build' }, include: ['src', 'test'] }),
    jsonFile('tsconfig.build.json', { extends: './tsconfig.json', compilerOptions: { rootDir: 'src', outDir: 'dist' }, include: ['src'] }),
    { path: 'README.md', content: README },
    { path: 'src/index.ts', content: INDEX },
    { path: 'test/slugify.test.ts', content: TEST },
  ],
};
