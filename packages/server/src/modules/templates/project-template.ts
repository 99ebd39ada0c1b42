/** A starter project: its files work as they are (a test installs and runs each one). */
export interface ProjectTemplate {
  id: string;
  name: string;
  description: string;
  language: string;
  files: Array<{ path: string; content: string }>;
}

export const NODE_GITIGNORE = { path: '.gitignore', content: 'node_modules/\ndist/\ncoverage/\n' };
