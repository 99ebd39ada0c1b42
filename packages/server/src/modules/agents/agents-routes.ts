import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  AgentSchema, CreateAgentBodySchema, ExecuteBodySchema, IdParamsSchema, PageOf, PageQuerySchema, RunSchema, SuccessSchema,
  type ExecuteBody, type Run,
} from '@codeloom/protocol';
import type { Principal } from '../../identity/principal.js';
import { errorResponses } from '../../plugins/openapi.js';
import { pageParams } from '../pagination.js';
import { toAgent, type AgentsService } from './agents-service.js';

const security = [{ bearer: [] }];
const read = { auth: 'read:code' } as const;
const write = { auth: 'write:code' } as const;

/** Starts runs (modules/runs' RunsService); named by shape, so this module does not import the one that imports it. */
export interface AgentRuns {
  executeAgent(principal: Principal, agentId: string, body: ExecuteBody): Promise<Run>;
}

export const agentsRoutes = ({ agents, runs }: { agents: AgentsService; runs: AgentRuns }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const agentTags = ['Agents'];

  app.post('/agents', {
    config: write,
    schema: { tags: agentTags, security, summary: 'Create an agent (a model with a specialization and settings)', body: CreateAgentBodySchema, response: { 201: AgentSchema, ...errorResponses(400, 401, 403, 429) } },
  }, async (request, reply) => reply.code(201).send(await agents.createAgent(request.principal!, request.body)));

  app.get('/agents', {
    config: read,
    schema: { tags: agentTags, security, summary: 'Your agents', querystring: PageQuerySchema, response: { 200: PageOf(AgentSchema), ...errorResponses(400, 401, 403, 429) } },
  }, async (request) => {
    const { page, limit } = pageParams(request.query);
    return agents.listAgents(request.principal!, page, limit);
  });

  app.get('/agents/:id', {
    config: read,
    schema: { tags: agentTags, security, summary: 'One agent', params: IdParamsSchema, response: { 200: AgentSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => toAgent(await agents.getAgent(request.principal!, request.params.id)));

  app.delete('/agents/:id', {
    config: write,
    schema: { tags: agentTags, security, summary: 'Delete an agent (its runs are kept)', params: IdParamsSchema, response: { 200: SuccessSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => {
    await agents.deleteAgent(request.principal!, request.params.id);
    return { success: true };
  });

  app.post('/agents/:id/execute', {
    config: write,
    schema: { tags: agentTags, security, summary: 'Run one agent on a task (202: the run, queued)', params: IdParamsSchema, body: ExecuteBodySchema, response: { 202: RunSchema, ...errorResponses(400, 401, 403, 404, 429, 503) } },
  }, async (request, reply) => reply.code(202).send(await runs.executeAgent(request.principal!, request.params.id, request.body)));
};
