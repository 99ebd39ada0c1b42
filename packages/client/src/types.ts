import type {
  Agent, ApiKey, CreateAgentBody, CreateApiKeyBody, CreateProjectBody, CreateWorkflowBody, CreatedApiKey, Environment,
  ExecuteBody, GenerateBody, GeneratedFile, GenerationResult as WireGenerationResult, LanguageInfo, ModelInfo, Pagination,
  Profile, Project, ProjectFile, Run, RunStep, Template, UpdateApiKeyBody, UpdateProjectBody, UsageQuery, UsageReport, UsageRow,
  VerifyResponse, Workflow,
} from '@codeloom/protocol';
import type { CodeloomError } from './errors.js';

export type {
  Agent, ApiKey, CreateAgentBody, CreateApiKeyBody, CreateProjectBody, CreateWorkflowBody, CreatedApiKey, Environment,
  ExecuteBody, GeneratedFile, LanguageInfo, ModelInfo, Pagination, Profile, Project, ProjectFile, Run, RunStep, Template,
  UpdateApiKeyBody, UpdateProjectBody, UsageReport, UsageRow, VerifyResponse, Workflow,
};

/** Query of `usage.get()`: `from`/`to` as UTC days (`YYYY-MM-DD`) or RFC 3339 times, `group_by` `day` (default), `model` or `api_key`. */
export type UsageParams = UsageQuery;

/** An API key's own limits (null: the plan's alone). */
export type ApiKeyLimits = ApiKey['limits'];

/** How the client authenticates. Omit it to start signed out (then call `auth.login()` or `auth.register()`). */
export type Credentials =
  | { apiKey: string }
  | { accessToken: string; refreshToken?: string | undefined };

/** What `onTokens` receives whenever the client's session tokens change (login, register, refresh). */
export interface TokenPair {
  accessToken: string;
  refreshToken: string | undefined;
}

/** A WebSocket constructor: the browser's, Node 22's global one, or the `ws` package's. */
export type WebSocketConstructor = new (url: string, ...rest: any[]) => unknown;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** What `onRetry` is told before the SDK waits and repeats a request. */
export interface RetryInfo {
  /** The failure being retried (a 408/409/429/5xx answer, a timeout or a connection error). */
  error: CodeloomError;
  /** 1 for the first retry, 2 for the second, … */
  attempt: number;
  /** The retries allowed for this call. */
  maxRetries: number;
  /** How long the SDK waits before repeating, in ms (at least `Retry-After` when the server sent one). */
  delayMs: number;
  method: string;
  /** The request path, e.g. `/api/v1/generate`. */
  path: string;
}

export interface ClientOptions {
  /** `sandbox` sends `X-Environment: sandbox`: the deterministic `sandbox` model, no token quota, resources kept apart. Default `production`. */
  environment?: Environment;
  /** Server origin (and optional path prefix), e.g. `https://codeloom.example.com`. Default: `CODELOOM_BASE_URL` where a `process.env` exists, else `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** The OpenAI SDK's spelling of `baseUrl` (give one or the other). */
  baseURL?: string;
  /** Retries of connection errors, timeouts, 408, 409, 429 and 5xx (exponential backoff with jitter, at least `Retry-After`). Default 2. */
  maxRetries?: number;
  /** Longest single wait before a retry, in ms; a longer `Retry-After` throws at once. Default 60 000. */
  maxRetryWait?: number;
  /** Called before each retry (e.g. to show "rate limited, retrying in 12 s"). */
  onRetry?: (info: RetryInfo) => void;
  /** Per-attempt timeout in ms for HTTP requests and for opening a streaming connection. Default 120 000. */
  timeout?: number;
  /** A fetch implementation. Default: the global `fetch`. */
  fetch?: FetchLike;
  /** A WebSocket constructor for `stream.generate()` and `runs.watch()`. Default: the global `WebSocket` (Node 20 has none: pass the `ws` package's). */
  WebSocket?: WebSocketConstructor;
  /** Called (and awaited) whenever the session tokens change, so rotated tokens can be stored. */
  onTokens?: (tokens: TokenPair) => void | Promise<void>;
  /** Extra headers sent with every HTTP request. */
  headers?: Record<string, string>;
}

/**
 * The one-object form of the constructor (the spec's `new CodeGenClient({ apiKey, environment })`):
 * credentials and options together. Without a credential, `CODELOOM_API_KEY` is used where a `process.env` exists.
 */
export interface CodeGenClientOptions extends ClientOptions {
  /** An API key (`cl_live_…`, `cl_test_…`). Default: `CODELOOM_API_KEY`. `null`: start signed out even when it is set. */
  apiKey?: string | null | undefined;
  /** A session access token (from `auth.login()`), instead of an API key. */
  accessToken?: string | undefined;
  /** The session's refresh token, so an expired access token is renewed. */
  refreshToken?: string | undefined;
}

/** Options of one call. */
export interface RequestOptions {
  /** Aborting rejects the call with a `CodeloomError` of code `cancelled`. */
  signal?: AbortSignal;
  /** Overrides the client's timeout (ms) for this call. */
  timeout?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
  /**
   * Called before each wait this call makes to retry (after the client's own `onRetry`): e.g. to say
   * "waiting for your tokens-per-minute window; resumes at 14:03:21" while a 429 with Retry-After is waited out.
   */
  onRetry?: (info: RetryInfo) => void;
}

/** The user object of an auth response (shape B sends an integer id; it is presented as a string). */
export interface AuthUser {
  id: string;
  email: string;
  name: string;
  plan?: string;
  [key: string]: unknown;
}

/**
 * An auth response, whichever shape the server used (A: `token`,
 * `refreshToken`, `expiresIn`; B: `access_token`, `refresh_token`,
 * `expires_in`), normalized.
 */
export interface AuthSession {
  accessToken: string;
  /** Absent when the server sent none (shape A on register); the client then keeps the refresh token it had. */
  refreshToken: string | undefined;
  /** Access token lifetime in seconds, when the server said. */
  expiresIn: number | undefined;
  /** `Date.now()`-based time (ms) at which the access token expires, when known. */
  expiresAt: number | undefined;
  tokenType: string;
  user: AuthUser | undefined;
}

export interface RegisterParams { email: string; password: string; name: string }
export interface LoginParams { email: string; password: string }
/** `auth.changePassword()`: the current password and the new one (8–256 characters). */
export interface ChangePasswordParams { current_password: string; new_password: string }
/** `auth.confirmPasswordReset()`: the token of the emailed link (after `#token=`) and the new password. */
export interface ConfirmPasswordResetParams { token: string; new_password: string }
/** The answer to a reset request: the same for every address, known or not. */
export interface PasswordResetAccepted { accepted: true; detail: string }

/**
 * A generation result. `files` is always present: when a server omits it,
 * one file is derived from `code`. `output` falls back to `code`.
 */
export type GenerationResult = Omit<WireGenerationResult, 'files' | 'output' | 'usage' | 'created_at'> & {
  files: GeneratedFile[];
  output: string;
  usage?: WireGenerationResult['usage'];
  created_at?: string;
};

/** Hints for the model: the spec's keys, and any others with string, number or boolean values. */
export interface GenerationContext {
  framework?: string;
  styling?: string;
  includeTests?: boolean;
  database?: string;
  [key: string]: string | number | boolean | undefined;
}

/** Body of `generate()` (`stream` is not accepted: use `stream.generate()`). */
export type GenerateParams = Omit<GenerateBody, 'stream' | 'context'> & { context?: GenerationContext };

export interface StreamGenerateOptions extends RequestOptions {
  /** Your id for the request on the channel (default: a random one). */
  id?: string;
  /** false: no token frames, only the result. Default true. */
  streamTokens?: boolean;
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

export interface ListParams {
  /** The page to start at (≥ 1, default 1): awaiting `list()` gives this page, iterating walks from it to the last. */
  page?: number;
  /** Items per page, 1–100 (server default 20). */
  limit?: number;
}

export interface Success { success: boolean }

export interface ProjectFileInfo { path: string; size: number; updated_at: string }
/** A change set to a project's files (CONTRACT §12.6), numbered from 1 per project. */
export interface ProjectRevision { id: string; number: number; message: string; author: { id: string; name: string } | null; files_changed: number; created_at: string }
/** A revision with each file it changed and that file's unified diff. */
export interface ProjectRevisionDetail extends ProjectRevision { files: Array<{ path: string; status: 'added' | 'modified' | 'deleted'; size: number | null; diff: string }> }

export interface ModelList { data: ModelInfo[]; default: string }

/** Events of `runs.watch()`, as the server sends them for a subscribed run; `seq` numbers them 1, 2, 3, … within the run. */
export type RunEvent = { seq: number } & (
  | { event: 'run_started'; id: string; data: Run }
  | { event: 'step_started'; id: string; data: { run_id: string; index: number; agent: string; model: string; iteration: number } }
  | { event: 'token'; id: string; data: string; step: number }
  | { event: 'step_completed'; id: string; data: { run_id: string; index: number; step: RunStep } }
  /** An engineer step called a tool (`step` counts its model calls from 1; `index` is the run step). */
  | { event: 'tool_call'; id: string; data: { run_id: string; index: number; step: number; call_id: string; name: string; arguments: unknown } }
  /** What the tool returned (`ok` false for a failed call or a command that exited non-zero), bounded. */
  | { event: 'tool_result'; id: string; data: { run_id: string; index: number; step: number; call_id: string; ok: boolean; output: string; duration_ms: number } }
  | { event: 'complete'; id: string; data: Run }
  /** The run waits for a window or a budget (its record's `waiting` says why and until when), or waits no more (`waiting: null`). */
  | { event: 'run_waiting'; id: string; data: Run }
  | { event: 'error'; id: string; data: { status: number; code: string; message: string; run?: Run } });
