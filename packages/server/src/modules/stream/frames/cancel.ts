import { Type, type Static } from '@sinclair/typebox';
import type { FrameHandler } from '../channel.js';
import { problemData } from '../channel-errors.js';
import { RequestId, frameCheck } from '../stream-frames.js';

const CancelFrameSchema = Type.Object({ type: Type.Literal('cancel'), id: RequestId });
type CancelFrame = Static<typeof CancelFrameSchema>;

/** `{"type":"cancel","id":…}`: aborts that running generation, which then ends with its `cancelled` error frame. */
export const cancel: FrameHandler<CancelFrame> = {
  type: 'cancel',
  check: frameCheck(CancelFrameSchema),
  needsAuth: true,
  handle(channel, { id }) {
    const controller = channel.generations.get(id);
    if (!controller) return channel.out.sendNow({ event: 'error', id, data: problemData('not_found', `No generation ${id} is running on this connection.`) });
    controller.abort();
  },
};
