import { Type } from '@sinclair/typebox';
import { GenerateBodySchema } from '@codeloom/protocol';
import { AppError, CancelledError, rateLimited } from '../../../errors.js';
import { RateLimiter } from '../../../limits/rate-limiter.js';
import { problemData, toErrorData } from '../channel-errors.js';
import { RequestId, frameHandler } from '../stream-frames.js';

const GenerateFrameSchema = Type.Object({
  type: Type.Literal('generate'),
  id: Type.Optional(RequestId),
  streamTokens: Type.Optional(Type.Boolean()),
  ...GenerateBodySchema.properties,
  stream: Type.Optional(Type.Boolean({ description: 'ignored on the channel' })),
});

/**
 * `{"type":"generate","id"?,…the POST /generate body…,"streamTokens"?}`: one
 * generation, told apart from the others running on the connection by its
 * id. Needs write:code (else 4403); counted against the request limits as an
 * HTTP request is; `token` frames (unless streamTokens is false) and the
 * generation's events, with backpressure, then `complete` or `error`.
 */
export const generate = frameHandler(GenerateFrameSchema, true, async (channel, frame) => {
  const { out, ws, generations } = channel;
  const principal = channel.auth.principal!;
  if (!principal.scopes.includes('write:code')) {
    out.sendNow({ event: 'error', ...(frame.id ? { id: frame.id } : {}), data: problemData('insufficient_scope', 'Generating needs the write:code permission, which this credential does not have.') });
    ws.close(4403, 'insufficient_scope');
    return;
  }
  const id = frame.id ?? channel.nextRequestId();
  // The server is stopping: answer at once instead of starting work the shutdown would cut off without a word.
  if (channel.shuttingDown) return out.sendNow({ event: 'error', id, data: problemData('shutting_down') });
  if (generations.has(id)) return out.sendNow({ event: 'error', id, data: problemData('conflict', `A generation with id ${id} is already running on this connection.`) });
  if (generations.size >= channel.settings.maxConcurrentPerConnection) {
    return out.sendNow({ event: 'error', id, data: problemData('rate_limited', `At most ${channel.settings.maxConcurrentPerConnection} generations may run at once on one connection.`) });
  }
  const controller = new AbortController();
  generations.set(id, controller);
  try {
    await channel.auth.live.verify();
    const admission = await channel.deps.rateLimiter.admit(RateLimiter.subjectFor(principal.user.id, principal.environment), principal.org.plan, RateLimiter.keyRequestWindows(principal));
    if (!admission.allowed) {
      throw rateLimited(admission.refusedBy, admission.report!, { report: true });
    }
    const { type: _t, id: _i, streamTokens, stream: _s, ...body } = frame;
    // The request log names the channel and the frame's id (the upgrade's request span has ended by now).
    const prepared = await channel.deps.generation.prepare(principal, body, { route: 'channel', requestId: id });
    const result = await channel.deps.generation.run(principal, prepared, {
      signal: controller.signal,
      ...(streamTokens === false ? {} : { onToken: (text: string) => out.send({ event: 'token', id, data: text }, controller.signal) }),
      onEvent: (e) => out.send({ event: e.event, id, data: e.data }, controller.signal),
    });
    out.sendNow({ event: 'complete', id, data: result });
  } catch (error) {
    if (ws.readyState !== ws.OPEN) return;
    if (error instanceof CancelledError || controller.signal.aborted) {
      const code = channel.shuttingDown ? 'shutting_down' : 'cancelled';
      out.sendNow({ event: 'error', id, data: problemData(code, code === 'cancelled' ? `Generation ${id} was cancelled; the model call was aborted.` : undefined) });
    } else {
      if (!(error instanceof AppError)) channel.log.error({ err: error }, 'channel generation failed');
      out.sendNow({ event: 'error', id, data: toErrorData(error) });
    }
  } finally {
    generations.delete(id);
  }
});
