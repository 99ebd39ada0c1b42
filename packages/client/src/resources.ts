import type { Run } from '@codeloom/protocol';
import { CodeloomError } from './errors.js';
import { mapPage, normalizeAuth, normalizeGeneration } from './normalize.js';
import { PageIterator } from './pagination.js';
import { GenerationStream, RunWatch } from './streams.js';
import type { Transport } from './transport.js';
import type {
  Agent, ApiKey, AuthSession, ChangePasswordParams, ConfirmPasswordResetParams, PasswordResetAccepted, CreateAgentBody, CreateApiKeyBody, CreateProjectBody, CreateWorkflowBody, CreatedApiKey,
  ExecuteBody, GenerateParams, GenerationResult, LanguageInfo, ListParams, ModelInfo, ModelList, LoginParams, Page, Profile,
  Project, ProjectFile, ProjectFileInfo, ProjectRevision, ProjectRevisionDetail, RegisterParams, RequestOptions, StreamGenerateOptions, Success, Template,
  UpdateApiKeyBody, UpdateProjectBody, UsageParams, UsageReport, VerifyResponse, Workflow,
} from './types.js';

const V1 = '/api/v1';
const seg = (id: string) => {
  if (typeof id !== 'string' || !id) throw new TypeError('id must be a non-empty string');
  return encodeURIComponent(id);
};

/** A paginated collection at `path`: `list()` walks every page, `page(n)` fetches one. */
abstract class Paginated<T> {
  protected constructor(protected readonly t: Transport) {}
  protected abstract readonly path: string;
  protected map(item: unknown): T { return item as T; }

  /** Every item of every page (async iterable; awaiting it gives the first page). */
  list(params: ListParams & RequestOptions = {}): PageIterator<T> {
    return new PageIterator<T>((n) => this.page(n, params), params.page ?? 1);
  }

  /** One page (`page` ≥ 1, `limit` 1–100). */
  async page(page: number, params: ListParams & RequestOptions = {}): Promise<Page<T>> {
    const { limit, page: _start, ...options } = params;
    const raw = await this.t.request<Page<unknown>>(this.path, { ...options, query: { page, limit } });
    return mapPage(raw, (item) => this.map(item));
  }
}

export class AuthResource {
  constructor(private readonly t: Transport) {}

  /** Creates an account; the client then uses the new session (and calls `onTokens`). */
  async register(params: RegisterParams, options: RequestOptions = {}): Promise<AuthSession> {
    const session = normalizeAuth(await this.t.request(`${V1}/auth/register`, { ...options, method: 'POST', auth: 'none', body: params }));
    await this.t.adopt(session);
    return session;
  }

  /** Signs in; the client then uses the new session (and calls `onTokens`). */
  async login(params: LoginParams, options: RequestOptions = {}): Promise<AuthSession> {
    const session = normalizeAuth(await this.t.request(`${V1}/auth/login`, { ...options, method: 'POST', auth: 'none', body: params }));
    await this.t.adopt(session);
    return session;
  }

  /** Trades the refresh token (the client's, or the one given) for new tokens, which the client adopts. Each refresh token works once. */
  refresh(refreshToken?: string, options: RequestOptions = {}): Promise<AuthSession> {
    return this.t.refresh(refreshToken, options);
  }

  /** Ends the session on the server (its tokens stop working at once) and forgets it here. */
  async logout(options: RequestOptions = {}): Promise<Success> {
    const out = await this.t.request<Success>(`${V1}/auth/logout`, { ...options, method: 'POST' });
    this.t.clearSession();
    return out;
  }

  /**
   * Changes the password of the signed-in account (a session: not an API key). Every other session of the
   * account ends; this client's goes on. A wrong `current_password` is an `invalid_credentials` error.
   */
  changePassword(params: ChangePasswordParams, options: RequestOptions = {}): Promise<Success> {
    // Not repeated after a timeout by default: the first may have changed it, and the repeat would then find the current password wrong.
    return this.t.request(`${V1}/auth/password`, { maxRetries: 0, ...options, method: 'POST', body: params });
  }

  /** Asks for a password reset link by email (sent when the server has a mail server); the same answer for every address. */
  requestPasswordReset(params: { email: string }, options: RequestOptions = {}): Promise<PasswordResetAccepted> {
    return this.t.request(`${V1}/auth/password-reset`, { ...options, method: 'POST', auth: 'none', body: params });
  }

  /** Sets a new password with the token of an emailed reset link (it works once); every session of the account ends. */
  confirmPasswordReset(params: ConfirmPasswordResetParams, options: RequestOptions = {}): Promise<Success> {
    return this.t.request(`${V1}/auth/password-reset/confirm`, { maxRetries: 0, ...options, method: 'POST', auth: 'none', body: params });
  }

  /** The session tokens the client holds now (undefined with an API key or when signed out). */
  get tokens() {
    return this.t.tokens();
  }
}

export class UserResource {
  constructor(private readonly t: Transport) {}
  /** Profile, permissions and rate limits (`GET /v1/user/profile`). */
  profile(options: RequestOptions = {}): Promise<Profile> {
    return this.t.request(`${V1}/user/profile`, options);
  }
}

export class StreamResource {
  constructor(private readonly t: Transport) {}
  /** Streams a generation over the WebSocket channel: iterate for tokens, await `.result` for the result. */
  generate(params: GenerateParams, options: StreamGenerateOptions = {}): GenerationStream {
    return new GenerationStream(this.t, params, options);
  }
}

export class GenerationsResource extends Paginated<GenerationResult> {
  protected readonly path = `${V1}/generations`;
  constructor(t: Transport) { super(t); }
  protected override map(item: unknown) { return normalizeGeneration(item); }
  async get(id: string, options: RequestOptions = {}): Promise<GenerationResult> {
    return normalizeGeneration(await this.t.request(`${this.path}/${seg(id)}`, options));
  }
}

export class ProjectFilesResource {
  constructor(private readonly t: Transport) {}
  /** Paths and sizes of a project's files, every page. */
  list(projectId: string, params: ListParams & RequestOptions = {}): PageIterator<ProjectFileInfo> {
    return new PageIterator((n) => this.page(projectId, n, params), params.page ?? 1);
  }
  page(projectId: string, page: number, params: ListParams & RequestOptions = {}): Promise<Page<ProjectFileInfo>> {
    const { limit, page: _start, ...options } = params;
    return this.t.request(`${V1}/projects/${seg(projectId)}/files`, { ...options, query: { page, limit } });
  }
  /** One file with its content, by its path in the project (e.g. `src/index.ts`). */
  get(projectId: string, path: string, options: RequestOptions = {}): Promise<ProjectFile> {
    return this.t.request(`${V1}/projects/${seg(projectId)}/files/${filePath(path)}`, options);
  }
  /** Writes one file (its whole content): a new revision, returned (the latest one when the content was already that). */
  write(projectId: string, path: string, content: string, options: RequestOptions = {}): Promise<ProjectRevision> {
    return this.t.request(`${V1}/projects/${seg(projectId)}/files/${filePath(path)}`, { maxRetries: 0, ...options, method: 'PUT', body: { content } });
  }
  /** Deletes one file: a new revision, returned. */
  delete(projectId: string, path: string, options: RequestOptions = {}): Promise<ProjectRevision> {
    return this.t.request(`${V1}/projects/${seg(projectId)}/files/${filePath(path)}`, { maxRetries: 0, ...options, method: 'DELETE' });
  }
}

/**
 * A project file's path in a URL: each segment encoded, "/" kept. "." and ".." segments are refused here (a URL
 * resolves them before it is sent, so the server would see another path); the server refuses the rest.
 */
function filePath(path: string): string {
  const encoded = path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/');
  if (!encoded) throw new TypeError('path must be a non-empty string');
  if (encoded.split('/').some((s) => s === '.' || s === '..')) throw new TypeError('path must not contain "." or ".." segments');
  return encoded;
}

/** A project's history: revisions newest first, one with its diffs, restore, and zip downloads. */
export class ProjectRevisionsResource {
  constructor(private readonly t: Transport) {}
  list(projectId: string, params: ListParams & RequestOptions = {}): PageIterator<ProjectRevision> {
    return new PageIterator((n) => this.page(projectId, n, params), params.page ?? 1);
  }
  page(projectId: string, page: number, params: ListParams & RequestOptions = {}): Promise<Page<ProjectRevision>> {
    const { limit, page: _start, ...options } = params;
    return this.t.request(`${V1}/projects/${seg(projectId)}/revisions`, { ...options, query: { page, limit } });
  }
  /** One revision with a unified diff per file it changed. */
  get(projectId: string, revision: number, options: RequestOptions = {}): Promise<ProjectRevisionDetail> {
    return this.t.request(`${V1}/projects/${seg(projectId)}/revisions/${revisionNumber(revision)}`, options);
  }
  /** Puts the files back as they were at `revision`: the new revision (or the latest, when nothing differed). Not repeated after a timeout by default. */
  restore(projectId: string, revision: number, options: RequestOptions = {}): Promise<ProjectRevision> {
    return this.t.request(`${V1}/projects/${seg(projectId)}/revisions/${revisionNumber(revision)}/restore`, { maxRetries: 0, ...options, method: 'POST' });
  }
  /** A zip of the files at `revision`, or of the current files without one. */
  archive(projectId: string, revision?: number, options: RequestOptions = {}): Promise<Uint8Array> {
    const path = revision === undefined ? `${V1}/projects/${seg(projectId)}/archive` : `${V1}/projects/${seg(projectId)}/revisions/${revisionNumber(revision)}/archive`;
    return this.t.request(path, { ...options, bytes: true });
  }
}

function revisionNumber(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new TypeError('revision must be an integer ≥ 1');
  return n;
}

export class ProjectsResource extends Paginated<Project> {
  protected readonly path = `${V1}/projects`;
  readonly files: ProjectFilesResource;
  readonly revisions: ProjectRevisionsResource;
  constructor(t: Transport) { super(t); this.files = new ProjectFilesResource(t); this.revisions = new ProjectRevisionsResource(t); }
  create(body: CreateProjectBody, options: RequestOptions = {}): Promise<Project> {
    return this.t.request(this.path, { ...options, method: 'POST', body });
  }
  get(id: string, options: RequestOptions = {}): Promise<Project> {
    return this.t.request(`${this.path}/${seg(id)}`, options);
  }
  update(id: string, body: UpdateProjectBody, options: RequestOptions = {}): Promise<Project> {
    return this.t.request(`${this.path}/${seg(id)}`, { ...options, method: 'PATCH', body });
  }
  delete(id: string, options: RequestOptions = {}): Promise<Success> {
    return this.t.request(`${this.path}/${seg(id)}`, { ...options, method: 'DELETE' });
  }
}

export class TemplatesResource {
  constructor(private readonly t: Transport) {}
  async list(options: RequestOptions = {}): Promise<Template[]> {
    return (await this.t.request<{ data: Template[] }>(`${V1}/templates`, options)).data;
  }
}

export class AgentsResource extends Paginated<Agent> {
  protected readonly path = `${V1}/agents`;
  constructor(t: Transport) { super(t); }
  create(body: CreateAgentBody, options: RequestOptions = {}): Promise<Agent> {
    return this.t.request(this.path, { ...options, method: 'POST', body });
  }
  get(id: string, options: RequestOptions = {}): Promise<Agent> {
    return this.t.request(`${this.path}/${seg(id)}`, options);
  }
  delete(id: string, options: RequestOptions = {}): Promise<Success> {
    return this.t.request(`${this.path}/${seg(id)}`, { ...options, method: 'DELETE' });
  }
  /** Runs the agent on a task; resolves with the run, `queued` (watch it with `runs.watch(run.id)`). */
  execute(id: string, body: ExecuteBody, options: RequestOptions = {}): Promise<Run> {
    return this.t.request(`${this.path}/${seg(id)}/execute`, { ...options, method: 'POST', body });
  }
}

export class WorkflowsResource extends Paginated<Workflow> {
  protected readonly path = `${V1}/workflows`;
  constructor(t: Transport) { super(t); }
  /** Creates a multi-agent workflow (`POST /api/v1/agents/create`). */
  create(body: CreateWorkflowBody, options: RequestOptions = {}): Promise<Workflow> {
    return this.t.request(`${V1}/agents/create`, { ...options, method: 'POST', body });
  }
  get(id: string, options: RequestOptions = {}): Promise<Workflow> {
    return this.t.request(`${this.path}/${seg(id)}`, options);
  }
  delete(id: string, options: RequestOptions = {}): Promise<Success> {
    return this.t.request(`${this.path}/${seg(id)}`, { ...options, method: 'DELETE' });
  }
  /** Runs the workflow on a task; resolves with the run, `queued`. */
  execute(id: string, body: ExecuteBody, options: RequestOptions = {}): Promise<Run> {
    return this.t.request(`${this.path}/${seg(id)}/execute`, { ...options, method: 'POST', body });
  }
}

export class RunsResource extends Paginated<Run> {
  protected readonly path = `${V1}/runs`;
  constructor(t: Transport) { super(t); }
  get(id: string, options: RequestOptions = {}): Promise<Run> {
    return this.t.request(`${this.path}/${seg(id)}`, options);
  }
  /** Cancels a queued or running run (a finished one: 409 `conflict`). */
  cancel(id: string, options: RequestOptions = {}): Promise<Run> {
    return this.t.request(`${this.path}/${seg(id)}/cancel`, { ...options, method: 'POST' });
  }
  /** The run's events over the WebSocket channel (kept ones replayed first, after `after` when given), ending at `complete` or `error`. */
  watch(id: string, options: { signal?: AbortSignal; timeout?: number; after?: number } = {}): RunWatch {
    seg(id); // validates
    return new RunWatch(this.t, id, options);
  }
}

export class ApiKeysResource extends Paginated<ApiKey> {
  protected readonly path = `${V1}/api-keys`;
  constructor(t: Transport) { super(t); }
  /** Creates a key; its secret `key` is in this answer only. Needs a session (an API key cannot mint keys). */
  create(body: CreateApiKeyBody, options: RequestOptions = {}): Promise<CreatedApiKey> {
    return this.t.request(this.path, { ...options, method: 'POST', body });
  }
  /** Renames a key or changes its own limits (`requests_per_minute`, `tokens_per_minute`, `monthly_tokens`; `null` removes one). */
  update(id: string, body: UpdateApiKeyBody, options: RequestOptions = {}): Promise<ApiKey> {
    return this.t.request(`${this.path}/${seg(id)}`, { ...options, method: 'PATCH', body });
  }
  /** Revokes a key at once. */
  revoke(id: string, options: RequestOptions = {}): Promise<Success> {
    return this.t.request(`${this.path}/${seg(id)}`, { ...options, method: 'DELETE' });
  }
}

export class UsageResource {
  constructor(private readonly t: Transport) {}
  /** Your model calls and tokens (`GET /api/v1/usage`): per UTC day (default), model or API key, `from`–`to` inclusive (default the last 30 days). */
  get(params: UsageParams & RequestOptions = {}): Promise<UsageReport> {
    const { from, to, group_by, ...options } = params;
    return this.t.request(`${V1}/usage`, { ...options, query: { from, to, group_by } });
  }
}

export class ModelsResource {
  constructor(private readonly t: Transport) {}
  /** The models this server offers (`default: true` marks the default). */
  async list(options: RequestOptions = {}): Promise<ModelInfo[]> {
    return (await this.t.request<ModelList>(`${V1}/models`, options)).data;
  }
}

export class LanguagesResource {
  constructor(private readonly t: Transport) {}
  async list(options: RequestOptions = {}): Promise<LanguageInfo[]> {
    return (await this.t.request<{ data: LanguageInfo[] }>(`${V1}/languages`, options)).data;
  }
}

/** `generate()`: one non-streamed generation. */
export async function generate(t: Transport, params: GenerateParams, options: RequestOptions = {}): Promise<GenerationResult> {
  if (!params || typeof params.prompt !== 'string') throw new TypeError('generate() needs { prompt }');
  const { stream: _ignored, ...body } = params as GenerateParams & { stream?: unknown };
  const raw = await t.request(`${V1}/generate`, { ...options, method: 'POST', body });
  if (raw === undefined) throw CodeloomError.client('invalid_response', 'The generation answer was empty.');
  return normalizeGeneration(raw);
}
