import type { SandboxFile } from '../../project-files.js';

/** A library module holding the entry point's logic (routes or cli), and the files that carry it. */
export interface RustMain { module: string; files: SandboxFile[] }

export interface RustNames { crate: string; E: string; f: string }
