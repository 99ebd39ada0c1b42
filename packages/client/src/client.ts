import {
  AgentsResource, ApiKeysResource, AuthResource, GenerationsResource, LanguagesResource, ModelsResource, ProjectsResource,
  RunsResource, StreamResource, TemplatesResource, UserResource, WorkflowsResource, generate,
} from './resources.js';
import { Transport, resolveOptions } from './transport.js';
import type { ClientOptions, Credentials, GenerateParams, GenerationResult, RequestOptions, VerifyResponse } from './types.js';

/**
 * The Codeloom client.
 *
 *   const client = new Codeloom({ apiKey: 'cl_live_…' }, { baseUrl: 'https://codeloom.example.com' });
 *   const result = await client.generate({ prompt: 'REST API for todos', language: 'typescript' });
 *
 * Credentials: `{ apiKey }`, `{ accessToken, refreshToken }`, or nothing
 * (then `auth.login()` / `auth.register()` sign the client in).
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
  private readonly transport: Transport;

  constructor(credentials?: Credentials | null, options: ClientOptions = {}) {
    this.transport = new Transport(resolveOptions(options), credentials ?? undefined);
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

  /** Generates code from a prompt (not streamed; see `stream.generate()`). The result always has `files`. */
  generate(params: GenerateParams, options: RequestOptions = {}): Promise<GenerationResult> {
    return generate(this.transport, params, options);
  }

  /** A client with the same credentials and options but others overridden (e.g. `{ environment: 'sandbox' }`). Tokens are not shared afterwards. */
  withOptions(options: ClientOptions): Codeloom {
    const o = this.transport.options;
    return new Codeloom(this.transport.credentials(), {
      environment: o.environment, baseUrl: o.baseUrl, maxRetries: o.maxRetries, maxRetryWait: o.maxRetryWait, timeout: o.timeout,
      fetch: o.fetch, ...(o.WebSocket ? { WebSocket: o.WebSocket } : {}), ...(o.onTokens ? { onTokens: o.onTokens } : {}), headers: o.headers,
      ...options,
    });
  }
}
