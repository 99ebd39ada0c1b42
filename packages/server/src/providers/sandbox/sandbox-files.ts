import type { PromptAnalysis } from './prompt-analysis.js';

export interface SandboxFile { path: string; lang: string; content: string }

export interface GenerationSpec {
  analysis: PromptAnalysis;
  language: string;
  framework: string | undefined;
  database: string | undefined;
  includeTests: boolean;
}

/** Generators per language; each returns the files of a small, runnable project. */
export type LanguageGenerator = (spec: GenerationSpec) => SandboxFile[];
