import type { GenerationSpec } from '../../project-files.js';

/** The C identifiers and file names of a project: `todo`, `TODO`, `title`, `TITLE`, `todo_store`, `todo_store.h`. */
export interface CNames { e: string; E: string; f: string; F: string; store: string; header: string }

export function cNames(spec: GenerationSpec): CNames {
  const e = spec.entity.snake;
  return { e, E: e.toUpperCase(), f: spec.field, F: spec.field.toUpperCase(), store: `${e}_store`, header: `${e}_store.h` };
}
