import { Type } from '@sinclair/typebox';
import { toValidationErrors, validatorCompiler } from '../../plugins/validation.js';
import { findNul } from '../../plugins/input-guard.js';

/** Largest client frame we read (a 32,000-character prompt fits with room to spare). */
export const MAX_FRAME_BYTES = 256 * 1024;
/** Frames above this are refused by ws itself, which closes the socket with 1009. */
export const HARD_FRAME_LIMIT = 4 * 1024 * 1024;

/** The caller's id of a generation (`generate`, `cancel`). */
export const RequestId = Type.String({ minLength: 1, maxLength: 128 });

export type FrameErrors = ReturnType<typeof toValidationErrors>;

/** A frame type's check: null when the frame is valid, else the validation errors in the problem-document shape. */
export function frameCheck(schema: object): (frame: unknown) => FrameErrors | null {
  const validate = validatorCompiler({ schema, httpPart: 'body' });
  return (frame) => {
    if (!validate(frame)) return toValidationErrors((validate.errors ?? []) as never);
    // As on HTTP (plugins/input-guard.ts): NUL is refused in every field.
    const nul = findNul(frame);
    return nul ? [{ path: nul, message: 'must not contain NUL (U+0000)' }] : null;
  };
}
