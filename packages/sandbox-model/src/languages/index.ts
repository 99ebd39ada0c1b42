import { lookupTable } from '@codeloom/protocol';
import type { GenerationSpec, LanguageGenerator, SandboxFile } from '../project-files.js';
import { generateBash } from './bash/index.js';
import { generateC } from './c/index.js';
import { generateCpp } from './cpp/index.js';
import { generateGeneric } from './generic/index.js';
import { generateGo } from './go/index.js';
import { generateJava } from './java/index.js';
import { generateNode } from './node/index.js';
import { generatePython } from './python/index.js';
import { generateRust } from './rust/index.js';

/**
 * The languages the sandbox model (a deterministic template model, not AI)
 * writes whole projects in, by catalog id; every other language gets the
 * generic single-file answer.
 */
export const GENERATORS = lookupTable<LanguageGenerator>({
  typescript: (s) => generateNode(s, true),
  javascript: (s) => generateNode(s, false),
  python: generatePython,
  java: generateJava,
  go: generateGo,
  rust: generateRust,
  c: generateC,
  cpp: generateCpp,
  bash: generateBash,
});

/** The files of the project a spec describes, in its language. */
export const projectFiles = (spec: GenerationSpec): SandboxFile[] => (GENERATORS[spec.language] ?? generateGeneric)(spec);
