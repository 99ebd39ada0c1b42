import type { Channel } from './channel.js';
import { problemData } from './channel-errors.js';
import { auth } from './frames/auth.js';
import { cancel } from './frames/cancel.js';
import { generate } from './frames/generate.js';
import { ping } from './frames/ping.js';
import { subscribe } from './frames/subscribe.js';
import { MAX_FRAME_BYTES, type FrameHandler } from './stream-frames.js';

/** Every client frame type, in the order an unknown type's error lists them. */
const HANDLERS: readonly FrameHandler[] = [auth, generate, cancel, subscribe, ping];
const BY_TYPE = new Map(HANDLERS.map((h) => [h.type, h]));
const FRAME_TYPES = HANDLERS.map((h) => h.type).join(', ');

/**
 * One client frame (already let through by the frame rate limit): read as a
 * JSON object, routed by its `type` to that type's handler once it matches
 * the type's schema and, where the type needs it, the connection has
 * authenticated. Anything wrong gets an `error` frame; the connection stays open.
 */
export async function dispatchFrame(channel: Channel, data: Buffer, isBinary: boolean): Promise<void> {
  // Frames are handled in arrival order while a credential is checked (waiters resume first in, first out).
  const checking = channel.auth.pending;
  if (checking) await checking;
  // A closing socket (refused, over the connection limit, 4403, shutdown) starts no more work: nobody would hear of it.
  if (channel.ws.readyState !== channel.ws.OPEN) return;
  const { out } = channel;
  if (isBinary || data.length > MAX_FRAME_BYTES) {
    const problem = isBinary ? problemData('validation_failed', 'Frames are JSON text; binary frames are not accepted.') : problemData('payload_too_large', `Frames are limited to ${MAX_FRAME_BYTES} bytes.`);
    return out.sendNow({ event: 'error', data: problem });
  }
  let frame: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(data.toString('utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    frame = parsed as Record<string, unknown>;
  } catch {
    return out.sendNow({ event: 'error', data: problemData('malformed_json', 'A frame must be a JSON object.') });
  }
  const type = frame.type;
  const id = typeof frame.id === 'string' ? frame.id : undefined;
  const handler = typeof type === 'string' ? BY_TYPE.get(type) : undefined;
  if (!handler) {
    return out.sendNow({ event: 'error', ...(id ? { id } : {}), data: { ...problemData('validation_failed', `Unknown frame type ${JSON.stringify(type ?? null)}; use one of ${FRAME_TYPES}.`), errors: [{ path: '/type', message: `must be one of: ${FRAME_TYPES}` }] } });
  }
  const errors = handler.check?.(frame);
  if (errors) return out.sendNow({ event: 'error', ...(id ? { id } : {}), data: { ...problemData('validation_failed', `The ${handler.type} frame does not match the schema.`), errors } });
  if (handler.needsAuth && !channel.auth.principal) return out.sendNow({ event: 'error', ...(id ? { id } : {}), data: problemData('unauthorized', 'Authenticate first: {"type":"auth","token":"…"}.') });
  return handler.handle(channel, frame);
}
