import { lookupTable } from '@codeloom/protocol';
import type { Conversation } from './conversation.js';
import { fencedPaths } from './conversation.js';
import type { GenerationSpec, SandboxFile } from './project-files.js';
import { KIND_NOUN, isTestFile } from './project-files.js';

/**
 * What the planner, architect, tester and documenter agent types answer
 * when the model is the sandbox (a deterministic template model, not AI).
 * Each takes the project the coder would write, so every step of a workflow
 * describes the same files.
 */

const TEST_TOOL = lookupTable<string>({
  typescript: 'node:test (built into Node)', javascript: 'node:test (built into Node)', python: 'unittest (pytest runs it too)',
  java: 'plain main() checks (no JUnit needed)', go: 'go test with net/http/httptest', rust: '#[test] unit and integration tests',
  c: 'assert() programs run by make test', cpp: 'assert() programs registered with CTest', bash: 'a plain bash test script',
});

const stack = (spec: GenerationSpec) => spec.framework || (spec.kind === 'api' ? 'the standard library' : 'no framework');

export function planText(spec: GenerationSpec): string {
  const r = spec.resource.words;
  const step3 = spec.kind === 'api'
    ? `Expose CRUD endpoints on ${stack(spec)}: GET/POST /${spec.resource.kebab} and GET/PUT/DELETE /${spec.resource.kebab}/{id}, answering 400 for bad input and 404 for unknown ids.`
    : spec.kind === 'cli'
      ? `Add the commands add, list, show, rename and remove, saving the ${r} to a file between runs; misuse exits with status 2.`
      : `Export the store and the ${spec.field} check as the public API of the ${spec.languageName} library.`;
  return [
    `# Plan: ${spec.title}`,
    '',
    `1. Model ${spec.entity.words === 'item' ? 'an item' : `the ${spec.entity.words}`} record (id, ${spec.field}, created at) and check input: the ${spec.field} is 1 to 200 characters after trimming.`,
    `2. Keep the ${r} in an in-memory store with create, get, update, remove and list${spec.database ? `, behind methods a ${spec.database} repository can take over (starting schema in db/schema.sql)` : ''}.`,
    `3. ${step3}`,
    `4. Test the happy path, invalid input and unknown ids with ${TEST_TOOL[spec.language] ?? 'the language\'s usual test tool'}.`,
    `5. Document in README.md how to install, run and test the ${spec.languageName} ${KIND_NOUN[spec.kind]}.`,
    '',
  ].join('\n');
}

/** What a file is for, from its path: enough for a design overview. */
function roleOf(path: string, spec: GenerationSpec): string {
  if (isTestFile(path)) return 'tests';
  if (/README\.md$/.test(path)) return 'how to install, run and test';
  if (/(^|\/)(package\.json|Cargo\.toml|go\.mod|pyproject\.toml|requirements\.txt|Makefile|CMakeLists\.txt|tsconfig\.json)$/.test(path)) return 'build and dependencies';
  if (/schema\.sql$/.test(path)) return `starting schema for ${spec.database || 'a database'}`;
  if (/routes?|router|handler/i.test(path)) return `HTTP routes for /${spec.resource.kebab}`;
  if (/(^|\/)app\.\w+$/.test(path)) return 'the app, built without listening so tests can drive it';
  if (/(^|\/)server\.(ts|js)$/.test(path)) return 'entry point: starts listening on PORT';
  if (/(^|\/)server\.\w+$|Server\.java$/.test(path)) return 'HTTP server';
  if (/cli|__main__|(^|\/)main\.\w+$|Main\.java$/.test(path)) return spec.kind === 'cli' ? 'command line' : 'entry point';
  if (/json/i.test(path)) return 'JSON helpers';
  if (/__init__\.py$|index\.\w+$/.test(path)) return 'public exports';
  if (/store|lib\.rs$|\.(h|hpp)$/.test(path) || path.toLowerCase().includes(spec.entity.flat) || path.toLowerCase().includes(spec.resource.kebab)) return `${spec.entity.words} record, input check and store`;
  return 'supporting code';
}

export function designText(spec: GenerationSpec, files: SandboxFile[]): string {
  const base = `/${spec.resource.kebab}`;
  return [
    `# Design: ${spec.title}`,
    '',
    `A ${spec.languageName} ${KIND_NOUN[spec.kind]} for ${spec.resource.words}, on ${stack(spec)}.`,
    '',
    '## Modules',
    '',
    ...files.map((f) => `- \`${f.path}\`: ${roleOf(f.path, spec)}`),
    '',
    '## Data model',
    '',
    '| field | type | notes |',
    '|---|---|---|',
    '| id | integer | assigned by the store, never reused |',
    `| ${spec.field} | text | 1 to 200 characters, trimmed |`,
    '| created at | timestamp | set on creation (UTC) |',
    ...(spec.kind === 'api' ? ['', '## Endpoints', '', '| method | path | answer |', '|---|---|---|',
      `| GET | ${base} | 200 with every ${spec.entity.words} |`, `| POST | ${base} | 201 with the new ${spec.entity.words}, 400 for bad input |`,
      `| GET | ${base}/{id} | 200, or 404 |`, `| PUT | ${base}/{id} | 200, 400 or 404 |`, `| DELETE | ${base}/{id} | 204, or 404 |`] : []),
    ...(spec.kind === 'cli' ? ['', '## Commands', '', `add, list, show, rename and remove; the ${spec.resource.words} persist in a file between runs; misuse exits with status 2.`] : []),
    '',
    '## Decisions',
    '',
    `- Storage: ${spec.database ? `in memory first, behind the store's methods, so a ${spec.database} repository can replace it without touching callers` : 'in memory, behind the store\'s methods, so a database can replace it later'}.`,
    `- Dependencies: ${spec.framework ? `${spec.framework} and nothing else` : 'none beyond the standard library, so the project builds offline'}.`,
    `- Tests: ${TEST_TOOL[spec.language] ?? 'the language\'s usual test tool'}.`,
    '',
  ].join('\n');
}

/** Only the test files; languages without test templates get a test plan in tests/. */
export function testerFiles(spec: GenerationSpec, project: SandboxFile[]): SandboxFile[] {
  const tests = project.filter((f) => isTestFile(f.path));
  if (tests.length) return tests;
  return [{
    path: 'tests/TEST_PLAN.md', lang: 'markdown',
    content: `# Test plan: ${spec.title}\n\n1. Create ${spec.entity.words === 'item' ? 'an item' : `a ${spec.entity.words}`}; read it back by id.\n2. Update its ${spec.field}; list shows the change.\n3. Remove it; reading it again finds nothing.\n4. An empty or 201-character ${spec.field} is refused with a clear message.\n`,
  }];
}

/** Every path the earlier steps wrote, in order (a documenter lists what is really there). */
export function writtenPaths(c: Conversation): string[] {
  return [...new Set(c.outputs.filter((o) => o.agent !== 'documenter').flatMap((o) => fencedPaths(o.text)))];
}

/**
 * The documenter's README: the project's own, listing the files the earlier
 * steps wrote (a tester's included), or the project's files when it runs alone.
 */
export function documenterFile(project: SandboxFile[], written: string[]): SandboxFile {
  const base = project.find((f) => f.path === 'README.md')!;
  const listed = (written.length ? written : project.map((f) => f.path)).filter((p) => p !== 'README.md');
  const [head] = base.content.split('\n## Files\n');
  return { ...base, content: `${head}\n## Files\n\n${listed.map((p) => `- \`${p}\``).join('\n')}\n` };
}
