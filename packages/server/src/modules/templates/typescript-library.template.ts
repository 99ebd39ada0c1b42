import { NODE_GITIGNORE, type ProjectTemplate } from './project-template.js';

export const typescriptLibrary: ProjectTemplate = {
  id: 'typescript-library',
  name: 'TypeScript library',
  description: 'A typed ESM library (slugify) built with tsc, with declarations and node:test tests run on the build.',
  language: 'typescript',
  files: [
    NODE_GITIGNORE,
    { path: 'package.json', content: `${JSON.stringify({ name: 'slugify-lib', version: '0.1.0', private: true, type: 'module', main: 'dist/src/index.js', types: 'dist/src/index.d.ts', scripts: { build: 'tsc', test: 'tsc && node --test dist/test/' }, devDependencies: { typescript: '~5.9.0', '@types/node': '^20.0.0' } }, null, 2)}\n` },
    { path: 'tsconfig.json', content: `${JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, declaration: true, outDir: 'dist', rootDir: '.', skipLibCheck: true, types: ['node'] }, include: ['src', 'test'] }, null, 2)}\n` },
    { path: 'README.md', content: '# slugify-lib\n\n```ts\nimport { slugify } from "slugify-lib";\nslugify("Hello, World!"); // "hello-world"\n```\n\n```sh\nnpm install\nnpm test\n```\n' },
    { path: 'src/index.ts', content: `export interface SlugifyOptions {\n  /** Separator between words (default "-"). */\n  separator?: string;\n  /** Longest slug to return (default unlimited). */\n  maxLength?: number;\n}\n\n/** A URL-safe slug: lower case ASCII words joined by the separator. */\nexport function slugify(text: string, options: SlugifyOptions = {}): string {\n  const separator = options.separator ?? '-';\n  const slug = text\n    .normalize('NFKD')\n    .replace(/[\\u0300-\\u036f]/g, '')\n    .toLowerCase()\n    .split(/[^a-z0-9]+/)\n    .filter(Boolean)\n    .join(separator);\n  return options.maxLength === undefined ? slug : slug.slice(0, options.maxLength).replace(new RegExp(\`\\\\\${separator}+$\`), '');\n}\n` },
    { path: 'test/slugify.test.ts', content: `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { slugify } from '../src/index.js';\n\ntest('makes lower-case ASCII slugs', () => {\n  assert.equal(slugify('Hello, World!'), 'hello-world');\n  assert.equal(slugify('Crème brûlée'), 'creme-brulee');\n});\n\ntest('honours separator and maxLength', () => {\n  assert.equal(slugify('a b c', { separator: '_' }), 'a_b_c');\n  assert.equal(slugify('hello big world', { maxLength: 9 }), 'hello-big');\n});\n` },
  ],
};
