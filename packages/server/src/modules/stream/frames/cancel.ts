import { Type } from '@sinclair/typebox';
import { problemData } from '../channel-errors.js';
import { RequestId, frameHandler } from '../stream-frames.js';

/** `{"type":"cancel","id":…}`: aborts that running generation, which then ends with its `cancelled` error frame. */
export const cancel = frameHandler(
  Type.Object({ type: Type.Literal('cancel'), id: RequestId }),
  true,
  (channel, { id }) => {
    const controller = channel.generations.get(id);
    if (!controller) return channel.out.sendNow({ event: 'error', id, data: problemData('not_found', `No generation ${id} is running on this connection.`) });
    controller.abort();
  },
);
