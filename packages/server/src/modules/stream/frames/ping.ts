import type { FrameHandler } from '../stream-frames.js';

/** `{"type":"ping"}` → `{"event":"pong"}`, before authentication too; the frame is not checked further. */
export const ping: FrameHandler = {
  type: 'ping',
  needsAuth: false,
  handle(channel) {
    channel.out.sendNow({ event: 'pong' });
  },
};
