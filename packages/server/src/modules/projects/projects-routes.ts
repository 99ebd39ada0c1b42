import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  CreateProjectBodySchema, IdParamsSchema, PageOf, PageQuerySchema, ProjectFileInfoSchema, ProjectFileSchema, ProjectSchema,
  SingleLine, SuccessSchema, TemplateSchema, UpdateProjectBodySchema,
} from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';
import { pageParams } from '../pagination.js';
import type { ProjectsService } from './projects-service.js';

const tags = ['Projects'];
const security = [{ bearer: [] }];
const FileParams = Type.Object({ id: SingleLine({ minLength: 1, maxLength: 64 }), '*': SingleLine({ minLength: 1, maxLength: 500 }) });

export const projectsRoutes = ({ projects }: { projects: ProjectsService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const read = { auth: 'read:code' } as const;
  const write = { auth: 'write:code' } as const;

  app.get('/templates', {
    config: read,
    schema: { tags, security, summary: 'Project templates', response: { 200: Type.Object({ data: Type.Array(TemplateSchema) }), ...errorResponses(401, 403, 429) } },
  }, async () => ({ data: projects.templates() }));

  app.get('/projects', {
    config: read,
    schema: { tags, security, summary: 'Your projects, newest first', querystring: PageQuerySchema, response: { 200: PageOf(ProjectSchema), ...errorResponses(400, 401, 403, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return projects.list(request.principal!, page, limit);
  });

  app.post('/projects', {
    config: write,
    schema: { tags, security, summary: 'Create a project (optionally from a template)', body: CreateProjectBodySchema, response: { 201: ProjectSchema, ...errorResponses(400, 401, 403, 429) } },
  }, async (request, reply) => reply.code(201).send(await projects.create(request.principal!, request.body)));

  app.get('/projects/:id', {
    config: read,
    schema: { tags, security, summary: 'One project', params: IdParamsSchema, response: { 200: ProjectSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => projects.get(request.principal!, request.params.id));

  app.patch('/projects/:id', {
    config: write,
    schema: { tags, security, summary: 'Rename or describe a project', params: IdParamsSchema, body: UpdateProjectBodySchema, response: { 200: ProjectSchema, ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request) => projects.update(request.principal!, request.params.id, request.body));

  app.delete('/projects/:id', {
    config: write,
    schema: { tags, security, summary: 'Delete a project and its files', params: IdParamsSchema, response: { 200: SuccessSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => {
    await projects.delete(request.principal!, request.params.id);
    return { success: true };
  });

  app.get('/projects/:id/files', {
    config: read,
    schema: { tags, security, summary: 'Files of a project (paths and sizes)', params: IdParamsSchema, querystring: PageQuerySchema, response: { 200: PageOf(ProjectFileInfoSchema), ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return projects.listFiles(request.principal!, request.params.id, page, limit);
  });

  app.get('/projects/:id/files/*', {
    config: read,
    schema: { tags, security, summary: 'One file of a project, by its path', params: FileParams, response: { 200: ProjectFileSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => projects.getFile(request.principal!, request.params.id, request.params['*']));
};
