import { withArticle } from '../../prompt-analysis.js';
import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { readme, schemaFile } from '../../project-files.js';
import { commentText } from '../../request-text.js';
import { nodeFlavour, storeModule, type NodeFlavour } from './names.js';
import { nodeApiFiles } from './server.js';
import { nodeTestFile } from './tests.js';

/**
 * TypeScript and JavaScript (ESM, Node 20) templates of the sandbox model, a
 * deterministic template model (not AI). One template serves both: `t()`
 * writes type syntax only for TypeScript, so the two cannot drift apart.
 */
export function generateNode(spec: GenerationSpec, ts: boolean): SandboxFile[] {
  const f = nodeFlavour(ts);
  const files: SandboxFile[] = [storeFile(spec, f)];
  if (spec.kind === 'api') files.push(...nodeApiFiles(spec, f));
  else if (spec.kind === 'cli') files.push(cliFile(spec, f));
  else files.push({ path: `src/index.${f.ext}`, lang: f.lang, content: `export { ${spec.entity.pascal}Store, parse${spec.entity.pascal}Input } from './${storeModule(spec)}.js';\n${f.t(`export type { ${spec.entity.pascal}, ${spec.entity.pascal}Input } from './${storeModule(spec)}.js';\n`)}` });
  if (spec.includeTests) files.push(nodeTestFile(spec, f));
  const schema = schemaFile(spec);
  if (schema) files.push(schema);
  files.push({ path: 'package.json', lang: 'json', content: packageJson(spec, f) });
  if (ts) files.push({ path: 'tsconfig.json', lang: 'json', content: TSCONFIG });
  const dist = ts ? 'dist/src' : 'src';
  const entry = spec.kind === 'api' ? `node ${dist}/server.js` : spec.kind === 'cli' ? `node ${dist}/cli.js add "first ${spec.entity.words}"` : `node -e "import('./${dist}/index.js').then(console.log)"`;
  files.push(readme(spec, { setup: `npm install${ts ? '\nnpx tsc' : ''}`, run: entry, test: 'npm test' }, files));
  return files;
}

const TSCONFIG = `${JSON.stringify({
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, outDir: 'dist', rootDir: '.', types: ['node'] },
  include: ['src', 'test'],
}, null, 2)}\n`;

function storeFile(spec: GenerationSpec, f: NodeFlavour): SandboxFile {
  const E = spec.entity.pascal;
  const field = spec.field;
  const t = f.t;
  const where = spec.database ? ` Swap it for a ${commentText(spec.database)} repository (see db/schema.sql) without changing its callers.` : '';
  return {
    path: `src/${storeModule(spec)}.${f.ext}`, lang: f.lang,
    content: `${t(`/** A ${spec.entity.words} as it is stored and returned. */
export interface ${E} {
  id: number;
  ${field}: string;
  createdAt: string;
}

/** What a client may set: everything but the generated id and timestamp. */
export type ${E}Input = Pick<${E}, '${field}'>;

`, `/** @typedef {{ id: number, ${field}: string, createdAt: string }} ${E} */
/** @typedef {{ ${field}: string }} ${E}Input */

`)}const MAX_LENGTH = 200;

/**
 * Checks an untrusted body (parsed JSON, command-line text) before it reaches
 * the store; returns the clean input, or a message saying what is wrong.
${t('', ` * @param {unknown} body\n * @returns {${E}Input | string}\n`)} */
export function parse${E}Input(body${t(': unknown')})${t(`: ${E}Input | string`)} {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'expected a JSON object';
  const value = (body${t(' as Record<string, unknown>')}).${field};
  if (typeof value !== 'string' || value.trim() === '') return '${field} must be a non-empty string';
  if (value.length > MAX_LENGTH) return \`${field} must be at most \${MAX_LENGTH} characters\`;
  return { ${field}: value.trim() };
}

/**
 * ${spec.resource.words[0]!.toUpperCase()}${spec.resource.words.slice(1)} kept in memory, in insertion order. Callers get copies, so
 * nothing outside can change a stored ${spec.entity.words} behind the store's back.${where}
 */
export class ${E}Store {
  ${t('private readonly ')}items = new Map${t(`<number, ${E}>`)}();
  ${t('private ')}nextId = 1;

${t('', `  /** @param {${E}[]} [initial] */\n`)}  constructor(initial${t(`: ${E}[]`)} = []) {
    for (const item of initial) {
      this.items.set(item.id, { ...item });
      this.nextId = Math.max(this.nextId, item.id + 1);
    }
  }

  list()${t(`: ${E}[]`)} {
    return [...this.items.values()].map((item) => ({ ...item }));
  }

${t('', `  /** @param {number} id */\n`)}  get(id${t(': number')})${t(`: ${E} | undefined`)} {
    const item = this.items.get(id);
    return item && { ...item };
  }

${t('', `  /** @param {${E}Input} input */\n`)}  create(input${t(`: ${E}Input`)})${t(`: ${E}`)} {
    const item = { id: this.nextId++, ${field}: input.${field}, createdAt: new Date().toISOString() };
    this.items.set(item.id, item);
    return { ...item };
  }

${t('', `  /**\n   * @param {number} id\n   * @param {${E}Input} input\n   */\n`)}  update(id${t(': number')}, input${t(`: ${E}Input`)})${t(`: ${E} | undefined`)} {
    const item = this.items.get(id);
    if (!item) return undefined;
    item.${field} = input.${field};
    return { ...item };
  }

${t('', `  /** @param {number} id */\n`)}  remove(id${t(': number')})${t(': boolean')} {
    return this.items.delete(id);
  }
}
`,
  };
}

function cliFile(spec: GenerationSpec, f: NodeFlavour): SandboxFile {
  const E = spec.entity.pascal;
  const cmd = spec.resource.kebab;
  const t = f.t;
  const envVar = `${spec.resource.snake.toUpperCase()}_FILE`;
  return {
    path: `src/cli.${f.ext}`, lang: f.lang,
    content: `#!/usr/bin/env node
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ${E}Store, parse${E}Input${t(`, type ${E}`)} } from './${storeModule(spec)}.js';

const USAGE = \`usage: ${cmd} <command>
  add <${spec.field}...>            add ${withArticle(spec.entity.words)}
  list [--json]           list every ${spec.entity.words}
  show <id>               show one ${spec.entity.words}
  rename <id> <${spec.field}...>   change the ${spec.field} of ${withArticle(spec.entity.words)}
  remove <id>             remove a ${spec.entity.words}\`;

/** Misuse of the command line: main() prints it and exits with status 2. */
export class UsageError extends Error {}

${t('', `/** @param {${E}} item */\n`)}const format = (item${t(`: ${E}`)}) => \`\${item.id}\\t\${item.${spec.field}}\`;

/**
 * Runs one command against the store and returns what to print. Pure apart
 * from the store, so tests need neither files nor a child process.
${t('', ` * @param {string[]} argv\n * @param {${E}Store} store\n * @returns {string}\n`)} */
export function run(argv${t(': string[]')}, store${t(`: ${E}Store`)})${t(': string')} {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const [command, ...rest] = positionals;
  const id = () => {
    const n = Number(rest[0]);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(\`not an id: \${rest[0] ?? '(missing)'}\`);
    return n;
  };
  const input = (words${t(': string[]')}) => {
    const parsed = parse${E}Input({ ${spec.field}: words.join(' ') });
    if (typeof parsed === 'string') throw new UsageError(parsed);
    return parsed;
  };
  switch (command) {
    case 'add':
      return format(store.create(input(rest)));
    case 'list':
      return values.json ? JSON.stringify(store.list(), null, 2) : store.list().map(format).join('\\n');
    case 'show': {
      const item = store.get(id());
      if (!item) throw new UsageError(\`no ${spec.entity.words} \${rest[0]}\`);
      return format(item);
    }
    case 'rename': {
      const item = store.update(id(), input(rest.slice(1)));
      if (!item) throw new UsageError(\`no ${spec.entity.words} \${rest[0]}\`);
      return format(item);
    }
    case 'remove':
      if (!store.remove(id())) throw new UsageError(\`no ${spec.entity.words} \${rest[0]}\`);
      return \`removed \${rest[0]}\`;
    default:
      throw new UsageError(USAGE);
  }
}

/** Loads the ${spec.resource.words} from a JSON file (${envVar}, default ${cmd}.json), runs the command, saves changes. */
function main()${t(': void')} {
  const file = process.env.${envVar} ?? '${cmd}.json';
  const store = new ${E}Store(existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8'))${t(` as ${E}[]`)}) : []);
  const before = JSON.stringify(store.list());
  try {
    const output = run(process.argv.slice(2), store);
    if (output) console.log(output);
  } catch (error) {
    const parseError = (error${t(' as { code?: string }')}).code?.startsWith('ERR_PARSE_ARGS');
    if (!(error instanceof UsageError) && !parseError) throw error;
    console.error((error${t(' as Error')}).message);
    process.exitCode = 2;
    return;
  }
  if (JSON.stringify(store.list()) !== before) writeFileSync(file, \`\${JSON.stringify(store.list(), null, 2)}\\n\`);
}

// Only when run directly: importing run() in a test must not touch files.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
`,
  };
}

function packageJson(spec: GenerationSpec, f: NodeFlavour): string {
  const deps: Record<string, string> = {};
  const dev: Record<string, string> = {};
  if (spec.kind === 'api' && spec.framework.includes('fastify')) deps.fastify = '^5.0.0';
  if (spec.kind === 'api' && spec.framework.includes('express')) {
    deps.express = '^5.0.0';
    if (f.ts) dev['@types/express'] = '^5.0.0';
  }
  if (f.ts) Object.assign(dev, { '@types/node': '^20.0.0', typescript: '^5.6.0' });
  const out = f.ts ? 'dist/src' : 'src';
  const scripts: Record<string, string> = {
    ...(f.ts ? { build: 'tsc' } : {}),
    ...(spec.kind === 'api' ? { start: `${f.ts ? 'tsc && ' : ''}node ${out}/server.js` } : {}),
    // Only with tests: `npm test` over no test files fails (node --test finds nothing to run).
    ...(spec.includeTests ? { test: f.ts ? 'tsc && node --test dist/test/*.test.js' : 'node --test test/*.test.js' } : {}),
  };
  const pkg = {
    name: spec.resource.kebab, version: '0.1.0', private: true, description: spec.title, type: 'module',
    ...(spec.kind === 'cli' ? { bin: { [spec.resource.kebab]: `${out}/cli.js` } } : {}),
    ...(spec.kind === 'library' ? { main: `${out}/index.js` } : {}),
    engines: { node: '>=20' }, scripts, dependencies: deps, devDependencies: dev,
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}
