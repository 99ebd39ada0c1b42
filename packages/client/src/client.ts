import {
  AgentsResource, ApiKeysResource, AuthResource, GenerationsResource, LanguagesResource, ModelsResource, ProjectsResource,
  RunsResource, StreamResource, TemplatesResource, UsageResource, UserResource, WorkflowsResource, generate,
} from './resources.js';
import { AdminResource } from './admin.js';
import { splitArgs } from './options.js';
import { Transport, resolveOptions } from './transport.js';
import type { ClientOptions, CodeGenClientOptions, Credentials, GenerateParams, GenerationResult, RequestOptions, VerifyResponse } from './types.js';

/**
 * The Codeloom client.
 *
 *   const client = new Codeloom({ apiKey: 'cl_live_…', baseUrl: 'https://codeloom.example.com' });
 *   const result = await client.generate({ prompt: 'REST API for todos', language: 'typescript' });
 *
 * One options object (credentials and options together), or the original
 * two arguments `(credentials, options)`. Credentials: `apiKey`,
 * `accessToken` + `refreshToken`, or none: then `CODELOOM_API_KEY` when set,
 * else signed out (`auth.login()` / `auth.register()` sign the client in;
 * pass `null` as credentials, or `apiKey: null`, to ignore `CODELOOM_API_KEY`).
 * An unknown option or an invalid value throws a TypeError here.
 */
export class Codeloom {
  readonly auth: AuthResource;
  readonly user: UserResource;
  readonly stream: StreamResource;
  readonly generations: GenerationsResource;
  readonly projects: ProjectsResource;
  readonly templates: TemplatesResource;
  readonly agents: AgentsResource;
  readonly workflows: WorkflowsResource;
  readonly runs: RunsResource;
  readonly apiKeys: ApiKeysResource;
  readonly models: ModelsResource;
  readonly languages: LanguagesResource;
  readonly usage: UsageResource;
  /** Instance administration: model deployments (administrators only). */
  readonly admin: AdminResource;
  private readonly transport: Transport;

  constructor(options?: CodeGenClientOptions);
  constructor(credentials: Credentials | null | undefined, options: ClientOptions | undefined);
  constructor(first?: CodeGenClientOptions | Credentials | null, second?: ClientOptions) {
    // eslint-disable-next-line prefer-rest-params
    const { credentials, options } = splitArgs(first, second, arguments.length >= 2);
    this.transport = new Transport(resolveOptions(options), credentials);
    const t = this.transport;
    this.auth = new AuthResource(t);
    this.user = new UserResource(t);
    this.stream = new StreamResource(t);
    this.generations = new GenerationsResource(t);
    this.projects = new ProjectsResource(t);
    this.templates = new TemplatesResource(t);
    this.agents = new AgentsResource(t);
    this.workflows = new WorkflowsResource(t);
    this.runs = new RunsResource(t);
    this.apiKeys = new ApiKeysResource(t);
    this.models = new ModelsResource(t);
    this.languages = new LanguagesResource(t);
    this.usage = new UsageResource(t);
    this.admin = new AdminResource(t);
  }

  /** The environment requests run in. */
  get environment(): 'production' | 'sandbox' {
    return this.transport.options.environment;
  }

  /** The server address requests go to. */
  get baseUrl(): string {
    return this.transport.options.baseUrl;
  }

  /** Who the credential belongs to: user, organization, plan, credential type, scopes, environment. */
  verify(options: RequestOptions = {}): Promise<VerifyResponse> {
    return this.transport.request('/api/v1/auth/verify', options);
  }

  /** The spec's name of `verify()`: checks the credential and returns the verified identity (`user.email`, `organization.name`, `subscription.plan`, …). */
  authenticate(options: RequestOptions = {}): Promise<VerifyResponse> {
    return this.verify(options);
  }

  /** Generates code from a prompt (not streamed; see `stream.generate()`). The result always has `files`. */
  generate(params: GenerateParams, options: RequestOptions = {}): Promise<GenerationResult> {
    return generate(this.transport, params, options);
  }

  /** A client with the same credentials and options but others overridden (e.g. `{ environment: 'sandbox' }`). Tokens are not shared afterwards. */
  withOptions(options: ClientOptions): Codeloom {
    const o = this.transport.options;
    return new Codeloom(this.transport.credentials() ?? null, {
      environment: o.environment, ...(options.baseURL === undefined ? { baseUrl: o.baseUrl } : {}), maxRetries: o.maxRetries, maxRetryWait: o.maxRetryWait, timeout: o.timeout,
      fetch: o.fetch, ...(o.WebSocket ? { WebSocket: o.WebSocket } : {}), ...(o.onTokens ? { onTokens: o.onTokens } : {}),
      ...(o.onRetry ? { onRetry: o.onRetry } : {}), headers: o.headers,
      ...options,
    });
  }
}

/**
 * The spec's name for the client, with the spec's one options object:
 *
 *   const client = new CodeGenClient({ apiKey: process.env.CODELOOM_API_KEY, environment: 'sandbox' });
 *   const identity = await client.authenticate();
 *
 * Everything of `Codeloom` works on it.
 */
export class CodeGenClient extends Codeloom {
  constructor(options: CodeGenClientOptions = {}) {
    super(options);
  }
}
