import type { GenerationSpec } from '../../project-files.js';

/** The backtick Go struct tags need (String.raw templates cannot hold one). */
export const BT = '`';

/** The exported Go name of the record's text field. */
export const fieldName = (spec: GenerationSpec) => (spec.field === 'title' ? 'Title' : 'Name');
