import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  CreateWorkflowBodySchema, ExecuteBodySchema, IdParamsSchema, PageOf, PageQuerySchema, RunSchema, SuccessSchema, WorkflowSchema,
  type ExecuteBody, type Run,
} from '@codeloom/protocol';
import type { Principal } from '../../identity/principal.js';
import { errorResponses } from '../../plugins/openapi.js';
import { pageParams } from '../pagination.js';
import { toWorkflow, type WorkflowsService } from './workflows-service.js';

const security = [{ bearer: [] }];
const read = { auth: 'read:code' } as const;
const write = { auth: 'write:code' } as const;

/** Starts runs (modules/runs' RunsService); named by shape, so this module does not import the one that imports it. */
export interface WorkflowRuns {
  executeWorkflow(principal: Principal, workflowId: string, body: ExecuteBody): Promise<Run>;
}

/** Workflows: create (at POST /agents/create, as the contract names it), list, read, delete, execute. */
export const workflowsRoutes = ({ workflows, runs }: { workflows: WorkflowsService; runs: WorkflowRuns }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const wfTags = ['Workflows'];

  app.post('/agents/create', {
    config: write,
    schema: { tags: wfTags, security, summary: 'Create a multi-agent workflow', body: CreateWorkflowBodySchema, response: { 201: WorkflowSchema, ...errorResponses(400, 401, 403, 429) } },
  }, async (request, reply) => reply.code(201).send(await workflows.createWorkflow(request.principal!, request.body)));

  app.get('/workflows', {
    config: read,
    schema: { tags: wfTags, security, summary: 'Your workflows', querystring: PageQuerySchema, response: { 200: PageOf(WorkflowSchema), ...errorResponses(400, 401, 403, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return workflows.listWorkflows(request.principal!, page, limit);
  });

  app.get('/workflows/:id', {
    config: read,
    schema: { tags: wfTags, security, summary: 'One workflow', params: IdParamsSchema, response: { 200: WorkflowSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => toWorkflow(await workflows.getWorkflow(request.principal!, request.params.id)));

  app.delete('/workflows/:id', {
    config: write,
    schema: { tags: wfTags, security, summary: 'Delete a workflow (its runs are kept)', params: IdParamsSchema, response: { 200: SuccessSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => {
    await workflows.deleteWorkflow(request.principal!, request.params.id);
    return { success: true };
  });

  app.post('/workflows/:id/execute', {
    config: write,
    schema: { tags: wfTags, security, summary: 'Run a workflow on a task (202: the run, queued)', params: IdParamsSchema, body: ExecuteBodySchema, response: { 202: RunSchema, ...errorResponses(400, 401, 403, 404, 429, 503) } },
  }, async (request, reply) => reply.code(202).send(await runs.executeWorkflow(request.principal!, request.params.id, request.body)));
};
