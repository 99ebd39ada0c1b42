import { Type } from '@sinclair/typebox';
import { ENVIRONMENTS, StringEnum } from '@codeloom/protocol';
import { frameHandler } from '../stream-frames.js';

/**
 * `{"type":"auth","token":…,"environment"?}`: authenticates the connection
 * (when the upgrade had no Authorization header), or replaces its credential
 * with a fresh one for the same account and environment (connection-auth.ts).
 */
export const auth = frameHandler(
  Type.Object({ type: Type.Literal('auth'), token: Type.String({ minLength: 1, maxLength: 4096 }), environment: Type.Optional(StringEnum(ENVIRONMENTS)) }),
  false,
  async (channel, frame) => {
    await channel.auth.authenticate(`Bearer ${frame.token}`, frame.environment);
  },
);
