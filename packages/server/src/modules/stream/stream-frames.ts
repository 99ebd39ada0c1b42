import { Type, type Static, type TLiteral, type TObject } from '@sinclair/typebox';
import { toValidationErrors, validatorCompiler } from '../../plugins/validation.js';
import { findNul } from '../../plugins/input-guard.js';
import type { Channel } from './channel.js';

/** Largest client frame we read (a 32,000-character prompt fits with room to spare). */
export const MAX_FRAME_BYTES = 256 * 1024;
/** Frames above this are refused by ws itself, which closes the socket with 1009. */
export const HARD_FRAME_LIMIT = 4 * 1024 * 1024;

/** The caller's id of a generation (`generate`, `cancel`). */
export const RequestId = Type.String({ minLength: 1, maxLength: 128 });

export type FrameErrors = ReturnType<typeof toValidationErrors>;

/**
 * One client frame type: how its frame is checked, whether it needs an
 * authenticated connection, and what it does. The dispatcher has already
 * parsed the frame, found its type, and answered what is wrong with it.
 */
export interface FrameHandler<F = Record<string, unknown>> {
  readonly type: string;
  /** The frame's schema errors, null when it is valid; without it every frame of the type is accepted. */
  readonly check?: (frame: unknown) => FrameErrors | null;
  /** true: refused with `unauthorized` until the connection has authenticated. */
  readonly needsAuth: boolean;
  handle(channel: Channel, frame: F): void | Promise<void>;
}

type FrameSchema = TObject & { properties: { type: TLiteral<string> } };

/** The handler of the frame type `schema` describes (its `type` literal names it); frames reach `handle` valid. */
export function frameHandler<S extends FrameSchema>(schema: S, needsAuth: boolean, handle: (channel: Channel, frame: Static<S>) => void | Promise<void>): FrameHandler<Static<S>> {
  return { type: schema.properties.type.const, check: frameCheck(schema), needsAuth, handle };
}

/** null when the frame is valid, else the validation errors in the problem-document shape. */
function frameCheck(schema: object): (frame: unknown) => FrameErrors | null {
  const validate = validatorCompiler({ schema, httpPart: 'body' });
  return (frame) => {
    if (!validate(frame)) return toValidationErrors((validate.errors ?? []) as never);
    // As on HTTP (plugins/input-guard.ts): NUL is refused in every field.
    const nul = findNul(frame);
    return nul ? [{ path: nul, message: 'must not contain NUL (U+0000)' }] : null;
  };
}
