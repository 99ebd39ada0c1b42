import { Type, type Static } from '@sinclair/typebox';
import { ENVIRONMENTS, StringEnum } from '@codeloom/protocol';
import type { FrameHandler } from '../channel.js';
import { frameCheck } from '../stream-frames.js';

const AuthFrameSchema = Type.Object({ type: Type.Literal('auth'), token: Type.String({ minLength: 1, maxLength: 4096 }), environment: Type.Optional(StringEnum(ENVIRONMENTS)) });
type AuthFrame = Static<typeof AuthFrameSchema>;

/**
 * `{"type":"auth","token":…,"environment"?}`: authenticates the connection
 * (when the upgrade had no Authorization header), or replaces its credential
 * with a fresh one for the same account and environment (connection-auth.ts).
 */
export const auth: FrameHandler<AuthFrame> = {
  type: 'auth',
  check: frameCheck(AuthFrameSchema),
  needsAuth: false,
  async handle(channel, frame) {
    await channel.auth.authenticate(`Bearer ${frame.token}`, frame.environment);
  },
};
