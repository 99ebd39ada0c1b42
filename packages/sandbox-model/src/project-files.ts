import { LANGUAGES } from '@codeloom/protocol';
import type { ProjectKind, PromptAnalysis } from './prompt-analysis.js';
import { NONE, commentText, knownDatabase, label } from './request-text.js';

/** One file the sandbox writes; `lang` goes into the fence's info string before the path. */
export interface SandboxFile { path: string; lang: string; content: string }

/** Everything a language generator may use: the prompt's analysis plus the caller's context. */
export interface GenerationSpec extends PromptAnalysis {
  language: string;
  /** How people write the language's name (TypeScript, C++). */
  languageName: string;
  /** context.framework as a label (request-text.ts: lower case, letters, digits, spaces and `. + # _ -`), '' when none (or "none"). */
  framework: string;
  /** context.database when it is a database the model knows (request-text.ts), lower-cased; '' when none, "memory" or unknown. */
  database: string;
  /** context.styling as a label, '' when none. */
  styling: string;
  includeTests: boolean;
}

export type LanguageGenerator = (spec: GenerationSpec) => SandboxFile[];

/**
 * The spec of one answer. Context values come from the request (a run's
 * requirements too), so none reaches a file as it is: the database must be
 * one the model knows, framework and styling become labels (request-text.ts).
 */
export function buildSpec(analysis: PromptAnalysis, language: string, context: Readonly<Record<string, unknown>>): GenerationSpec {
  const text = (key: string) => {
    const s = Object.hasOwn(context, key) ? label(context[key]) : '';
    return NONE.has(s) ? '' : s;
  };
  const setting = (key: string) => (Object.hasOwn(context, key) ? context[key] : undefined);
  const tests = setting('includeTests') ?? setting('include_tests') ?? setting('tests');
  return {
    ...analysis, language, languageName: LANGUAGES.find((l) => l.id === language)?.name ?? language,
    framework: text('framework'), database: knownDatabase(setting('database')), styling: text('styling'),
    includeTests: tests === true || tests === 'true' || tests === 1 || tests === 'yes',
  };
}

/** Files that are tests, whatever the language's convention. */
export function isTestFile(path: string): boolean {
  return /(^|\/)(tests?|__tests__|spec)\/|\.(test|spec)\.[a-z]+$|_test\.(go|c|cpp|py|sh)$|(^|\/)test_[^/]+$|Test\.java$/.test(path);
}

/**
 * One fenced block per file, named by the ```<lang> <path> convention that
 * parseFencedFiles reads back. The fence is longer than any backtick run
 * inside (a README with its own ```sh block would otherwise end early).
 */
export function fenced(file: SandboxFile): string {
  const longest = Math.max(2, ...[...file.content.matchAll(/^ {0,3}(`{3,})/gm)].map((m) => m[1]!.length));
  const fence = '`'.repeat(longest + 1);
  const body = file.content === '' || file.content.endsWith('\n') ? file.content : `${file.content}\n`;
  return `${fence}${file.lang} ${file.path}\n${body}${fence}`;
}

export function renderFiles(files: SandboxFile[]): string {
  return files.map(fenced).join('\n\n');
}

export const KIND_NOUN: Record<ProjectKind, string> = { api: 'JSON API', cli: 'command-line tool', library: 'library' };

/** A starting schema when the context names a database; the generated code keeps an in-memory store until it is wired in. */
export function schemaFile(spec: GenerationSpec): SandboxFile | undefined {
  if (!spec.database) return undefined;
  const table = spec.resource.snake;
  const serial = /postgres/.test(spec.database) ? 'BIGSERIAL PRIMARY KEY' : /mysql|maria/.test(spec.database) ? 'BIGINT AUTO_INCREMENT PRIMARY KEY' : 'INTEGER PRIMARY KEY';
  return {
    path: 'db/schema.sql', lang: 'sql',
    content: `-- ${commentText(spec.title)}: schema for ${commentText(spec.database)}.
CREATE TABLE IF NOT EXISTS ${table} (
  id ${serial},
  ${spec.field} TEXT NOT NULL,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE INDEX IF NOT EXISTS ${table}_created_at ON ${table} (created_at);
`,
  };
}

/** A README every project shares; how to build, run and test differs per language. */
export interface ReadmeCommands { run: string; test?: string; setup?: string; storage?: string }

export function readme(spec: GenerationSpec, commands: ReadmeCommands, files: SandboxFile[]): SandboxFile {
  const routes = spec.kind === 'api'
    ? ['', '## Endpoints', '', `| method | path | answer |`, '|---|---|---|',
      `| GET | /${spec.resource.kebab} | 200, every ${spec.entity.words} |`, `| GET | /${spec.resource.kebab}/{id} | 200, or 404 |`,
      `| POST | /${spec.resource.kebab} | 201 with \`{"${spec.field}": "…"}\`, or 400 |`, `| PUT | /${spec.resource.kebab}/{id} | 200, 400 or 404 |`,
      `| DELETE | /${spec.resource.kebab}/{id} | 204, or 404 |`]
    : [];
  const steps = [commands.setup, `# run\n${commands.run}`, commands.test && spec.includeTests ? `# test\n${commands.test}` : undefined].filter(Boolean);
  return {
    path: 'README.md', lang: 'markdown',
    content: [
      `# ${spec.title}`, '',
      `A ${spec.languageName} ${KIND_NOUN[spec.kind]} for ${spec.resource.words}${spec.framework ? ` (${spec.framework})` : ''}.`,
      `Generated by the Codeloom sandbox model, a deterministic template model (not AI): a starting skeleton to build on.`,
      ...(commands.storage ? ['', commands.storage] : spec.database ? ['', `Data lives in memory for now; \`db/schema.sql\` is a starting schema for ${spec.database}.`] : []),
      '', '```sh', steps.join('\n\n'), '```', ...routes, '', '## Files', '',
      ...files.filter((f) => f.path !== 'README.md').map((f) => `- \`${f.path}\``), '',
    ].join('\n'),
  };
}
