import type { GenerationSpec } from '../../project-files.js';

export interface NodeFlavour {
  ts: boolean;
  ext: 'ts' | 'js';
  lang: 'typescript' | 'javascript';
  /** The TypeScript text, or the plain-JavaScript alternative. */
  t: (typed: string, plain?: string) => string;
}

export function nodeFlavour(ts: boolean): NodeFlavour {
  return { ts, ext: ts ? 'ts' : 'js', lang: ts ? 'typescript' : 'javascript', t: (typed, plain = '') => (ts ? typed : plain) };
}

/** The module holding the record type, input validation and the store: `src/todos.ts`. */
export const storeModule = (spec: GenerationSpec) => spec.resource.kebab;
