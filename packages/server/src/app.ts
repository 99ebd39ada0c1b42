import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Config } from './config/load-config.js';
import type { AppContext } from './context.js';
import { createContext, closeContext, type ContextOptions } from './create-context.js';
import './plugins/fastify-types.js';
import { registerAuthHook } from './plugins/auth-hook.js';
import { registerErrorHandler } from './plugins/error-handler.js';
import { registerJsonParser } from './plugins/json-parser.js';
import { registerMetrics } from './plugins/metrics.js';
import { registerNotFound } from './plugins/not-found.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerCors } from './plugins/cors.js';
import { registerInputGuard } from './plugins/input-guard.js';
import { clientErrorHandler, frameworkErrors, refuseConnectMethod, registerHostCheck } from './plugins/protocol-errors.js';
import { registerRequestLog, type RequestLogMode } from './plugins/request-log.js';
import { requestIdFrom } from './plugins/request-id.js';
import { validatorCompiler } from './plugins/validation.js';
import { AppError } from './errors.js';
import { apiKeysRoutes } from './modules/api-keys/api-keys-routes.js';
import { authRoutes, bearerRefreshRoute } from './modules/auth/auth-routes.js';
import { passwordRoutes } from './modules/auth/password-routes.js';
import { systemRoutes } from './modules/system/system-routes.js';
import { usersRoutes } from './modules/users/users-routes.js';
import { generateRoutes } from './modules/generate/generate-routes.js';
import { verifyRoutes } from './modules/verify/verify-routes.js';
import { projectsRoutes } from './modules/projects/projects-routes.js';
import { agentsRoutes } from './modules/agents/agents-routes.js';
import { runsRoutes } from './modules/runs/runs-routes.js';
import { workflowsRoutes } from './modules/workflows/workflows-routes.js';
import { streamRoutes } from './modules/stream/stream-routes.js';
import { oauthRoutes } from './modules/oauth/oauth-routes.js';
import { oauthClientRoutes } from './modules/oauth/oauth-client-routes.js';
import { registerSseStreams } from './plugins/sse-streams.js';
import { dashboardRoutes } from './modules/dashboard/dashboard-routes.js';
import { usageRoutes } from './modules/usage/usage-routes.js';
import { logsRoutes } from './modules/logs/logs-routes.js';
import { webhooksRoutes } from './modules/webhooks/webhooks-routes.js';
import { budgetsRoutes } from './modules/budgets/budgets-routes.js';
import { adminRoutes } from './modules/deployments/deployments-routes.js';
import { openAIRoutes, OPENAI_PREFIX } from './modules/openai-compat/openai-routes.js';
import { OpenAIService } from './modules/openai-compat/openai-service.js';
import { sendOpenAIFrameworkError } from './modules/openai-compat/openai-errors.js';
import { anthropicRoutes, ANTHROPIC_PREFIX } from './modules/anthropic-compat/anthropic-routes.js';
import { sendAnthropicFrameworkError } from './modules/anthropic-compat/anthropic-errors.js';
import { ChatCalls } from './modules/generate/chat-call.js';
import { responsesRoutes } from './modules/openai-compat/responses-routes.js';
import { ResponsesService } from './modules/openai-compat/responses-service.js';
import { EmbeddingsService } from './modules/openai-compat/openai-embeddings.js';
import { StoreUsageMeter } from './modules/usage/usage-meter.js';
import { OAuthService } from './modules/oauth/oauth-service.js';
import { OAuthClientsService } from './modules/oauth/oauth-clients-service.js';
import { BrowserSessions } from './modules/oauth/browser-session.js';
import { DashboardSessions } from './modules/dashboard/dashboard-sessions.js';
import { UsageService } from './modules/usage/usage-service.js';

export const API_PREFIX = '/api/v1';

/** `/v1/…` is the same resource as `/api/v1/…`: one route table, two spellings. */
export function rewriteVersionAlias(url: string): string {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?') ? `/api${url}` : url;
}

export interface CodeloomApp {
  app: FastifyInstance;
  ctx: AppContext;
  /** Stop taking new requests, let in-flight ones finish, then close storage. */
  close(): Promise<void>;
  /** The drain timed out: end every open SSE stream with `shutting_down` and leave no run of this instance `running`. */
  abandon(): Promise<void>;
}

export async function buildApp(config: Config, options: ContextOptions = {}): Promise<CodeloomApp> {
  const ctx = await createContext(config, options);
  let closing = false;
  const app = Fastify({
    logger: config.logLevel === 'silent' ? false : {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'password', 'token', 'refreshToken', 'refresh_token', 'key', 'secret', 'api_key', 'apiKey', '*.api_key', '*.apiKey'], censor: '[redacted]' },
    },
    // Request lines are written by registerRequestLog, as CODELOOM_REQUEST_LOG says.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    rewriteUrl: (req) => rewriteVersionAlias(req.url ?? '/'),
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // Routing failures under /openai/v1 answer in OpenAI's error shape, like every other error there.
    frameworkErrors: (error, request, reply) => (request.url.startsWith(`${OPENAI_PREFIX}/`) ? sendOpenAIFrameworkError(error, request, reply)
      : request.url.startsWith(`${ANTHROPIC_PREFIX}/`) ? sendAnthropicFrameworkError(error, request, reply) : frameworkErrors(error, request, reply)),
    clientErrorHandler, http: { requireHostHeader: false },
  });
  app.setValidatorCompiler(validatorCompiler);
  ctx.mail.attachLogger(app.log);
  // With an OTLP endpoint: a span per request (continuing an incoming traceparent), first of the hooks.
  ctx.tracing?.register(app);
  // Callback-style hooks on the hot path: an async hook costs extra microtask turns on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!closing) return done();
    reply.header('connection', 'close');
    done(new AppError('service_unavailable', 'The server is shutting down; retry on another instance.'));
  });
  // A response finished while draining closes its connection, so keep-alive sockets do not hold the shutdown open.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  registerHostCheck(app);
  refuseConnectMethod(app);
  registerInputGuard(app);
  const sseStreams = registerSseStreams(app);
  registerErrorHandler(app);
  registerNotFound(app);
  registerJsonParser(app);
  await registerCors(app, config.corsOrigins ?? []);
  registerMetrics(app, ctx.metrics);
  registerRequestLog(app, { mode: config.requestLog as RequestLogMode, sampleEvery: config.requestLogSample });
  await registerOpenApi(app, config.issuer!);
  registerAuthHook(app, { credentials: ctx.credentials, rateLimiter: ctx.rateLimiter, metrics: ctx.metrics });
  await registerRoutes(app, ctx);
  await app.ready();
  await ctx.runs.start();
  const recovered = await ctx.runs.recover();
  // Pending webhook deliveries are scheduled again from the database (they survive restarts).
  await ctx.webhooks.start();
  if (recovered.interrupted || recovered.requeued) app.log.warn(recovered, 'runs recovered from the previous stop');

  return {
    app,
    ctx,
    async close() {
      closing = true;
      // Runs first: checkpointed while storage is certainly up; run event streams then end (clients resume elsewhere).
      await ctx.runs.shutdown();
      void sseStreams.shutdown('run');
      await app.close();
      await closeContext(ctx);
    },
    async abandon() {
      closing = true;
      await Promise.all([sseStreams.shutdown(), ctx.runs.forceInterrupt()]);
    },
  };
}

/** Every route, each factory handed the services it names (the routes-only services are built here). */
async function registerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { config, store, auth, models, generation, runs } = ctx;
  await app.register(systemRoutes({ database: store.handle, redis: ctx.redis, metrics: ctx.metrics, keyRing: ctx.keyRing }));
  await app.register(bearerRefreshRoute({ auth }));
  await app.register(oauthRoutes({
    oauth: new OAuthService(store, {
      issuer: config.issuer!, accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl, oauthCodeTtl: config.oauthCodeTtl,
      events: ctx.credentialWatch,
    }),
    auth,
    browserSessions: new BrowserSessions(store),
  }));
  await app.register(streamRoutes({ credentials: ctx.credentials, credentialWatch: ctx.credentialWatch, rateLimiter: ctx.rateLimiter, generation: ctx.generation, runs: ctx.runs, config: ctx.config }, `${API_PREFIX}/stream`));
  if (config.dashboard) {
    const sessions = new DashboardSessions(store, ctx.revocations, ctx.keyRing, config.accessTokenTtl);
    await app.register(dashboardRoutes({ auth, sessions, issuer: config.issuer!, passwordResetByMail: ctx.mail.configured }));
  }
  await app.register(async (api) => {
    await api.register(authRoutes({ auth }));
    await api.register(passwordRoutes({ passwords: ctx.passwords }));
    await api.register(usersRoutes());
    await api.register(apiKeysRoutes({ apiKeys: ctx.apiKeys }));
    await api.register(oauthClientRoutes({ oauthClients: new OAuthClientsService(store, ctx.credentialWatch) }));
    await api.register(generateRoutes({ generation, models }));
    await api.register(verifyRoutes({ generation }));
    await api.register(projectsRoutes({ projects: ctx.projects }));
    await api.register(agentsRoutes({ agents: ctx.agents, runs }));
    await api.register(workflowsRoutes({ workflows: ctx.workflows, runs }));
    await api.register(runsRoutes({ runs }));
    await api.register(usageRoutes({ usage: new UsageService(store) }));
    await api.register(logsRoutes({ logs: ctx.logs }));
    await api.register(webhooksRoutes({ webhooks: ctx.webhooks }));
    await api.register(budgetsRoutes({ budgets: ctx.budgets }));
    await api.register(adminRoutes({ deployments: ctx.deployments, admins: ctx.admins }));
  }, { prefix: API_PREFIX });
  const embeddings = new EmbeddingsService(models, ctx.rateLimiter.spend, new StoreUsageMeter(store.usage, (error) => app.log.warn({ err: error }, 'usage not recorded')));
  await app.register(openAIRoutes({ openai: new OpenAIService(store, models, generation), models, embeddings }), { prefix: OPENAI_PREFIX });
  await app.register(responsesRoutes({ responses: new ResponsesService(store, new ChatCalls(store, models, generation), models) }), { prefix: OPENAI_PREFIX });
  await app.register(anthropicRoutes({ calls: new ChatCalls(store, models, generation), models }), { prefix: ANTHROPIC_PREFIX });
}
