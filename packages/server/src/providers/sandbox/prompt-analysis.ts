/** What the deterministic sandbox model reads out of a prompt: what to build and what it is about. */
export type ProjectKind = 'api' | 'cli' | 'library';

export interface PromptAnalysis {
  kind: ProjectKind;
  /** Plural resource name in lower case, e.g. "todos". */
  resource: string;
  /** Singular form, e.g. "todo". */
  entity: string;
  /** A short title for READMEs and comments. */
  title: string;
}

const STOP = new Set(['a', 'an', 'the', 'simple', 'small', 'basic', 'tiny', 'rest', 'restful', 'api', 'http', 'json', 'web', 'service', 'server', 'app', 'application', 'cli', 'tool', 'script', 'program', 'library', 'module', 'that', 'which', 'with', 'and', 'or', 'to', 'in', 'on', 'my', 'our', 'some', 'new', 'crud', 'backend', 'endpoint', 'endpoints', 'write', 'create', 'build', 'make', 'generate', 'implement', 'code', 'for', 'of', 'using', 'typescript', 'javascript', 'python', 'rust', 'go', 'java', 'node', 'fastify', 'express', 'it', 'is', 'be', 'will', 'can', 'should', 'manage', 'managing', 'store', 'storing', 'list', 'lists', 'track', 'tracking', 'handle', 'handles', 'from', 'by', 'me', 'please', 'function', 'class', 'file', 'files', 'test', 'tests', 'unit']);

export function singular(word: string): string {
  if (/ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(ss|us|is)$/.test(word)) return word;
  if (/(x|ch|sh|ses)$/.test(word) && word.endsWith('es')) return word.slice(0, -2);
  return word.endsWith('s') ? word.slice(0, -1) : word;
}

export function plural(word: string): string {
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

function identifierSafe(word: string): string {
  const w = word.toLowerCase().replace(/[^a-z0-9]/g, '');
  return /^[a-z]/.test(w) ? w : `item${w}`;
}

export function analyzePrompt(prompt: string): PromptAnalysis {
  const text = prompt.toLowerCase();
  const kind: ProjectKind = /\b(api|rest|server|endpoint|endpoints|crud|backend|http service|microservice|web service)\b/.test(text) ? 'api'
    : /\b(cli|command[- ]line|command|script|tool|terminal)\b/.test(text) ? 'cli' : 'library';
  const after = /\b(?:for|of|manage|managing|manages|track|tracking|tracks|about|store|storing|stores|handle|handling|list|listing)\s+(?:a |an |the |my |our |user |users' )?([a-z][a-z0-9-]{1,30})/.exec(text);
  let noun = after && !STOP.has(after[1]!) ? after[1]! : undefined;
  if (!noun) noun = text.split(/[^a-z0-9-]+/).filter((w) => w.length > 2 && !STOP.has(w)).pop();
  const base = identifierSafe(noun ?? 'items');
  const entity = singular(base) || 'item';
  const resource = plural(entity);
  const title = prompt.trim().replace(/\s+/g, ' ').slice(0, 80) || `${entity} ${kind}`;
  return { kind, resource, entity, title };
}

export const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
