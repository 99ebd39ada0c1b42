/**
 * The errors module (floor 1): one hierarchy rooted in AppError, every class carrying a code of the
 * registry (`@codeloom/protocol` error-codes.ts), and the one Retry-After helper. The classes live in
 * errors/; import them from here.
 */
export { AppError, notFound } from './errors/app-error.js';
export { CancelledError } from './errors/cancelled-error.js';
export { ProviderError, UpstreamError, type ProviderErrorKind } from './errors/provider-error.js';
export { UniqueViolation } from './errors/unique-violation.js';
export { ConfigError, StartupError } from './errors/startup-errors.js';
export { SandboxUnavailableError } from './errors/sandbox-unavailable.js';
export { parseRetryAfter, rateLimitHeaders, rateLimited, retryAfterHeader, retryAfterOf, secondsUntil, wholeSeconds, type WindowReport } from './errors/retry-after.js';
