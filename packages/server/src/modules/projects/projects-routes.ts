import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  CreateProjectBodySchema, IdParamsSchema, PageOf, PageQuerySchema, ProjectFileInfoSchema, ProjectFileSchema, ProjectRevisionDetailSchema,
  ProjectRevisionSchema, ProjectSchema, RevisionParamsSchema, SingleLine, SuccessSchema, TemplateSchema, UpdateProjectBodySchema, WriteProjectFileBodySchema,
} from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';
import { pageParams } from '../pagination.js';
import type { ProjectsService } from './projects-service.js';

const tags = ['Projects'];
const security = [{ bearer: [] }];
/** A zip download: documented as binary; a Buffer reply is sent as it is (no serializer). */
const ZipResponse = { description: 'The files as a zip (`Content-Disposition: attachment`).', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } };
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

  // The router drops a trailing "/" before matching (ignoreTrailingSlash), so "files/a/" would write "a": the
  // path handed on keeps it, and is refused as naming a directory.
  const filePath = (request: { url: string; params: { '*': string } }) => {
    const wildcard = request.params['*'];
    return request.url.split('?')[0]!.endsWith('/') && !wildcard.endsWith('/') ? `${wildcard}/` : wildcard;
  };
  const revisionNote = 'Every change to the files is a revision (docs/api.md, Project revisions).';
  app.put('/projects/:id/files/*', {
    config: write,
    schema: {
      tags, security, summary: 'Write one file of a project (a new revision)', params: FileParams, body: WriteProjectFileBodySchema,
      description: `${revisionNote} The path must be relative and normalised (no "..", ".", empty segments, leading "/" or backslashes; at most 500 bytes); the body is bounded by CODELOOM_BODY_LIMIT (413 beyond). Writing the content the file already has makes no revision: 200 with the latest one.`,
      response: { 200: ProjectRevisionSchema, 201: ProjectRevisionSchema, ...errorResponses(400, 401, 403, 404, 413, 429) },
    },
  }, async (request, reply) => {
    const { revision, created } = await projects.writeFile(request.principal!, request.params.id, filePath(request), request.body.content);
    return reply.code(created ? 201 : 200).send(revision);
  });

  app.delete('/projects/:id/files/*', {
    config: write,
    schema: { tags, security, summary: 'Delete one file of a project (a new revision)', description: revisionNote, params: FileParams, response: { 200: ProjectRevisionSchema, ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request) => projects.deleteFile(request.principal!, request.params.id, filePath(request)));

  app.get('/projects/:id/revisions', {
    config: read,
    schema: { tags, security, summary: 'Revisions of a project, newest first', params: IdParamsSchema, querystring: PageQuerySchema, response: { 200: PageOf(ProjectRevisionSchema), ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return projects.listRevisions(request.principal!, request.params.id, page, limit);
  });

  app.get('/projects/:id/revisions/:rev', {
    config: read,
    schema: { tags, security, summary: 'One revision with a unified diff per file', params: RevisionParamsSchema, response: { 200: ProjectRevisionDetailSchema, ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request) => projects.getRevision(request.principal!, request.params.id, request.params.rev));

  app.post('/projects/:id/revisions/:rev/restore', {
    config: write,
    schema: {
      tags, security, summary: 'Put the files back as they were at a revision (a new revision)', params: RevisionParamsSchema,
      description: 'Makes a new revision whose files are those right after revision `rev` (files added since are deleted): 201. When they already are, no revision is made: 200 with the latest one.',
      response: { 200: ProjectRevisionSchema, 201: ProjectRevisionSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
  }, async (request, reply) => {
    const revision = await projects.restore(request.principal!, request.params.id, request.params.rev);
    return revision ? reply.code(201).send(revision) : reply.code(200).send(await projects.latestRevision(request.principal!, request.params.id));
  });

  const sendZip = (reply: { type: (t: string) => unknown; header: (k: string, v: string) => unknown }, archive: { filename: string; zip: Buffer }) => {
    reply.type('application/zip');
    reply.header('content-disposition', `attachment; filename="${archive.filename}"`);
    return archive.zip;
  };

  app.get('/projects/:id/revisions/:rev/archive', {
    config: read,
    schema: { tags, security, summary: 'A zip of the files at a revision (application/zip)', params: RevisionParamsSchema, response: { 200: ZipResponse, ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request, reply) => sendZip(reply, await projects.archive(request.principal!, request.params.id, request.params.rev)));

  app.get('/projects/:id/archive', {
    config: read,
    schema: { tags, security, summary: 'A zip of the current files (application/zip)', params: IdParamsSchema, response: { 200: ZipResponse, ...errorResponses(401, 403, 404, 429) } },
  }, async (request, reply) => sendZip(reply, await projects.archive(request.principal!, request.params.id)));
};
