import { expressApi } from './express-api.template.js';
import { fastifyApi } from './fastify-api.template.js';
import { nodeCli } from './node-cli.template.js';
import type { ProjectTemplate } from './project-template.js';
import { pythonPackage } from './python-package.template.js';
import { rustCli } from './rust-cli.template.js';
import { typescriptLibrary } from './typescript-library.template.js';

export type { ProjectTemplate };

export const TEMPLATES: readonly ProjectTemplate[] = [fastifyApi, expressApi, nodeCli, typescriptLibrary, pythonPackage, rustCli];

export function findTemplate(id: string): ProjectTemplate | undefined {
  return TEMPLATES.find((t) => t.id === id);
}
