import { ERROR_CODES, type ErrorCode } from '@codeloom/protocol';

/**
 * The root of the server's error hierarchy: every error class carries a code of the registry
 * (`@codeloom/protocol` error-codes.ts), and so its status. Services throw it; the error handler
 * turns it into an RFC 9457 document, the channel and SSE streams into an `error` frame.
 */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    detail?: string,
    readonly extra: {
      errors?: Array<{ path: string; message: string }>;
      headers?: Record<string, string>;
      /** A model provider's own error code, passed on with `upstream_rejected` (`upstream_code` in the problem document). */
      upstreamCode?: string;
    } = {},
  ) {
    super(detail ?? ERROR_CODES[code].detail);
    this.name = 'AppError';
    this.status = ERROR_CODES[code].status;
  }
}

export const notFound = (what = 'resource') => new AppError('not_found', `No such ${what}.`);
