import { expressApi } from './express-api.template.js';
import { fastifyApi } from './fastify-api.template.js';
import { nodeCli } from './node-cli.template.js';
import type { ProjectTemplate } from './project-template.js';
import { pythonPackage } from './python-package.template.js';
import { rustCli } from './rust-cli.template.js';
import { typescriptLibrary } from './typescript-library.template.js';
import { viteReactApp } from './vite-react-app.template.js';

export type { ProjectTemplate };

/** Every starter template, in the order GET /api/v1/templates lists them. */
export const TEMPLATES: readonly ProjectTemplate[] = Object.freeze([
  fastifyApi,
  expressApi,
  viteReactApp,
  nodeCli,
  typescriptLibrary,
  pythonPackage,
  rustCli,
]);

export function findTemplate(id: string): ProjectTemplate | undefined {
  return TEMPLATES.find((t) => t.id === id);
}
