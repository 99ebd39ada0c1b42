import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CreateDeploymentBodySchema, DeploymentListSchema, DeploymentSchema, DeploymentTestResultSchema, IdParamsSchema, SuccessSchema, UpdateDeploymentBodySchema } from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';
import type { Admins } from './admin-guard.js';
import type { DeploymentsService } from './deployments-service.js';

const DESCRIPTION = 'Model deployments (CONTRACT §12.4): model back-ends added at run time, several per model, routed by weight among the healthy ones (docs/models.md). Administrators only: an administrator\'s session token or an API key with scope `admin`. The API key is stored encrypted and never returned (`has_api_key`). Providers configured by environment variables appear as read-only deployments (`env-openai`, `env-anthropic`): PATCH and DELETE answer 409. A change reaches every instance within 2 s.';

/** Admin routes under /api/v1/admin/. */
export const adminRoutes = ({ deployments, admins }: { deployments: DeploymentsService; admins: Admins }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'any' } as const;
  const tags = ['Admin'];
  const security = [{ bearer: [] }];
  // Before the body is validated: anyone else gets 403 whatever they send.
  app.addHook('preValidation', admins.preHandler);

  app.post('/admin/deployments', {
    config,
    schema: { tags, security, summary: 'Add a model deployment', description: DESCRIPTION, body: CreateDeploymentBodySchema, response: { 201: DeploymentSchema, ...errorResponses(400, 401, 403, 429) } },
  }, async (request, reply) => reply.code(201).send(await deployments.create(request.body)));

  app.get('/admin/deployments', {
    config,
    schema: { tags, security, summary: 'List the deployments with their health on this instance', description: DESCRIPTION, response: { 200: DeploymentListSchema, ...errorResponses(401, 403, 429) } },
  }, async () => ({ data: deployments.list() }));

  app.get('/admin/deployments/:id', {
    config,
    schema: { tags, security, summary: 'A deployment with its health', params: IdParamsSchema, response: { 200: DeploymentSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => deployments.get(request.params.id));

  app.patch('/admin/deployments/:id', {
    config,
    schema: { tags, security, summary: 'Change a deployment (an empty api_key removes the key)', params: IdParamsSchema, body: UpdateDeploymentBodySchema, response: { 200: DeploymentSchema, ...errorResponses(400, 401, 403, 404, 409, 429) } },
  }, async (request) => deployments.update(request.params.id, request.body));

  app.delete('/admin/deployments/:id', {
    config,
    schema: { tags, security, summary: 'Remove a deployment', params: IdParamsSchema, response: { 200: SuccessSchema, ...errorResponses(401, 403, 404, 409, 429) } },
  }, async (request) => {
    await deployments.delete(request.params.id);
    return { success: true };
  });

  app.post('/admin/deployments/:id/test', {
    config,
    schema: { tags, security, summary: 'Make a one-token call to the deployment\'s first model and report ok or the error, with the latency', params: IdParamsSchema, response: { 200: DeploymentTestResultSchema, ...errorResponses(401, 403, 404, 409, 429) } },
  }, async (request) => deployments.test(request.params.id));
};
