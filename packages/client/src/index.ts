export { Codeloom, CodeGenClient } from './client.js';
export { Codeloom as default } from './client.js';
export {
  CodeloomError, APIError, BadRequestError, AuthenticationError, PermissionDeniedError, NotFoundError, ConflictError,
  UnprocessableEntityError, RateLimitError, InternalServerError, APIConnectionError, APIConnectionTimeoutError, APIUserAbortError,
  CLIENT_ERROR_CODES, codeForStatus,
  type ClientErrorCode, type CodeloomErrorInit, type FieldError,
} from './errors.js';
export { ERROR_CODES, ERROR_CODE_LIST, isErrorCode } from '@codeloom/protocol';
export type { ErrorCode, ProblemDocument, StreamEvent } from '@codeloom/protocol';
export { PageIterator } from './pagination.js';
export { GenerationStream, RunWatch } from './streams.js';
export { normalizeAuth, normalizeGeneration } from './normalize.js';
export type * from './types.js';
export type {
  AgentsResource, ApiKeysResource, AuthResource, GenerationsResource, LanguagesResource, ModelsResource, ProjectFilesResource,
  ProjectRevisionsResource, ProjectsResource, RunsResource, StreamResource, TemplatesResource, UsageResource, UserResource, WorkflowsResource,
} from './resources.js';
