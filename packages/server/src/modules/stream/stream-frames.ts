import { Type, type Static } from '@sinclair/typebox';
import { ENVIRONMENTS, GenerateBodySchema, SingleLine, StringEnum } from '@codeloom/protocol';
import { validatorCompiler } from '../../plugins/validation.js';
import { toValidationErrors } from '../../plugins/validation.js';
import { findNul } from '../../plugins/input-guard.js';

/** Largest client frame we read (a 32,000-character prompt fits with room to spare). */
export const MAX_FRAME_BYTES = 256 * 1024;
/** Frames above this are refused by ws itself, which closes the socket with 1009. */
export const HARD_FRAME_LIMIT = 4 * 1024 * 1024;

const RequestId = Type.String({ minLength: 1, maxLength: 128 });

export const GenerateFrameSchema = Type.Object({
  type: Type.Literal('generate'),
  id: Type.Optional(RequestId),
  streamTokens: Type.Optional(Type.Boolean()),
  ...GenerateBodySchema.properties,
  stream: Type.Optional(Type.Boolean({ description: 'ignored on the channel' })),
});
export type GenerateFrame = Static<typeof GenerateFrameSchema>;

const CancelFrameSchema = Type.Object({ type: Type.Literal('cancel'), id: RequestId });
const SubscribeFrameSchema = Type.Object({ type: Type.Literal('subscribe'), run_id: SingleLine({ minLength: 1, maxLength: 64 }), after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })) });
const AuthFrameSchema = Type.Object({ type: Type.Literal('auth'), token: Type.String({ minLength: 1, maxLength: 4096 }), environment: Type.Optional(StringEnum(ENVIRONMENTS)) });

const compile = (schema: object) => validatorCompiler({ schema, httpPart: 'body' });
export const FRAME_VALIDATORS = {
  generate: compile(GenerateFrameSchema),
  cancel: compile(CancelFrameSchema),
  subscribe: compile(SubscribeFrameSchema),
  auth: compile(AuthFrameSchema),
} as const;

export type FrameType = keyof typeof FRAME_VALIDATORS | 'ping';
export const FRAME_TYPES: FrameType[] = ['auth', 'generate', 'cancel', 'subscribe', 'ping'];

/** null when valid, else the validation errors in the problem-document shape. */
export function frameErrors(type: keyof typeof FRAME_VALIDATORS, frame: unknown) {
  const validate = FRAME_VALIDATORS[type];
  if (!validate(frame)) return toValidationErrors((validate.errors ?? []) as never);
  // As on HTTP (plugins/input-guard.ts): NUL is refused in every field.
  const nul = findNul(frame);
  return nul ? [{ path: nul, message: 'must not contain NUL (U+0000)' }] : null;
}
