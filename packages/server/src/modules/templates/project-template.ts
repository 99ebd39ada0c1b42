/** A starter project: its files work as they are (template-catalog.test.ts installs and runs each one). */
export interface ProjectTemplate {
  id: string;
  name: string;
  description: string;
  language: string;
  files: Array<{ path: string; content: string }>;
}

export type TemplateFile = ProjectTemplate['files'][number];

export const NODE_GITIGNORE: TemplateFile = { path: '.gitignore', content: 'node_modules/\ndist/\ncoverage/\n*.log\n.env\n' };

/** A JSON file as npm and editors write it (two-space indent, trailing newline), so a fresh `npm install` leaves no diff. */
export function jsonFile(path: string, value: unknown): TemplateFile {
  return { path, content: `${JSON.stringify(value, null, 2)}\n` };
}
