import type { GenerationSpec, SandboxFile } from '../../project-files.js';

/** The files of a Python web variant, its test, how to run it and the package it needs. */
export interface PythonWeb { files: SandboxFile[]; test: SandboxFile; run: string; dependency?: string }

/** The line importing the store into the web modules. */
export const imports = (spec: GenerationSpec) => `from .store import ${spec.entity.pascal}Store, parse_${spec.entity.snake}_input`;
