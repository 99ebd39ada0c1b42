import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { BudgetListSchema, BudgetSchema, CreateBudgetBodySchema, IdParamsSchema, SuccessSchema, UpdateBudgetBodySchema } from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';
import type { BudgetsService } from './budgets-service.js';

const DESCRIPTION = 'Budgets in US dollars per organization, member or API key, by UTC day, UTC month or in total. Every model call reserves its most cost (its prompt bound and output cap at the model\'s price) in each budget that applies, atomically with its tokens and across instances, and settles to its real cost: the dollars admitted in a period never exceed the amount. A call that would exceed one is a 429 `budget_exceeded` (Retry-After when the period resets; none for `total`); a call whose most cost alone is more than the amount is a 400 `request_too_large`. Managed by the organization\'s owner with a dashboard session token.';

export const budgetsRoutes = ({ budgets }: { budgets: BudgetsService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { auth: 'any', sessionOnly: true } as const;
  const tags = ['Budgets'];
  const security = [{ bearer: [] }];

  app.post('/budgets', {
    config,
    schema: { tags, security, summary: 'Create a budget', description: DESCRIPTION, body: CreateBudgetBodySchema, response: { 201: BudgetSchema, ...errorResponses(400, 401, 403, 409, 429) } },
  }, async (request, reply) => reply.code(201).send(await budgets.create(request.principal!, request.body)));

  app.get('/budgets', {
    config,
    schema: { tags, security, summary: "List the organization's budgets with what each has spent this period", response: { 200: BudgetListSchema, ...errorResponses(401, 403, 429) } },
  }, async (request) => budgets.list(request.principal!));

  app.get('/budgets/:id', {
    config,
    schema: { tags, security, summary: 'A budget with what it has spent this period', params: IdParamsSchema, response: { 200: BudgetSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => budgets.get(request.principal!, request.params.id));

  app.patch('/budgets/:id', {
    config,
    schema: { tags, security, summary: 'Change a budget\'s amount, period or alert thresholds (its scope stays)', params: IdParamsSchema, body: UpdateBudgetBodySchema, response: { 200: BudgetSchema, ...errorResponses(400, 401, 403, 404, 429) } },
  }, async (request) => budgets.update(request.principal!, request.params.id, request.body));

  app.delete('/budgets/:id', {
    config,
    schema: { tags, security, summary: 'Delete a budget', params: IdParamsSchema, response: { 200: SuccessSchema, ...errorResponses(401, 403, 404, 429) } },
  }, async (request) => {
    await budgets.delete(request.principal!, request.params.id);
    return { success: true };
  });
};
