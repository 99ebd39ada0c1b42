import { openEventStream } from '../../plugins/sse-streams.js';
import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RegisteredModel } from '../../providers/model-registry.js';
import type { ToolCallDelta } from '../../providers/provider.js';
import { CancelledError } from '../../errors.js';
import type { ChatCallResult } from '../generate/chat-call.js';
import { describeAnthropicError } from './anthropic-errors.js';
import { toolUseId, toStopReason, usageOf } from './anthropic-response.js';

/**
 * The Messages API's streaming, as Anthropic sends it: `event: <type>` and `data: <json>` per event —
 * message_start (the message with empty content), then per content block content_block_start (the first
 * followed by a ping), content_block_delta (`text_delta`, or `input_json_delta` with `partial_json` for a
 * tool_use block) and content_block_stop; then message_delta (stop_reason, stop_sequence, usage) and
 * message_stop. The HTTP head is written only when the first output arrives (or the call ends), so a
 * failure before any (a 429, an unknown model, an upstream that failed with every fallback) is a plain
 * HTTP error in Anthropic's shape. After that a failure is an `error` event, and no message_stop. A slow
 * reader holds back the model; a reader that leaves aborts it.
 */
export async function streamAnthropic(
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { id: string; requestedModel: string; inputTokensAtStart: number },
  work: (io: { signal: AbortSignal; onText: (text: string) => Promise<void>; onToolCall: (delta: ToolCallDelta) => Promise<void>; onAttempt: (model: RegisteredModel) => void }) => Promise<ChatCallResult>,
): Promise<void> {
  const raw = reply.raw;
  const abort = new AbortController();
  const startedAt = performance.now();
  let model = opts.requestedModel;
  let firstAttemptAt: number | undefined;
  let started = false;
  /** The content block being written (its index), and which tool call each tool_use block carries. */
  let index = -1;
  let open: 'text' | 'tool_use' | undefined;
  const toolBlocks = new Map<number, number>();
  const onClose = () => { if (!raw.writableFinished) abort.abort(); };
  raw.on('close', onClose);

  const send = async (type: string, payload: Record<string, unknown>) => {
    if (raw.destroyed) return;
    if (!raw.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`)) await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
  };
  const start = async () => {
    if (started) return;
    started = true;
    const now = performance.now();
    const upstreamFrom = firstAttemptAt ?? now;
    openEventStream(reply, { 'server-timing': `upstream;desc="first token";dur=${(now - upstreamFrom).toFixed(1)}, gateway;dur=${(upstreamFrom - startedAt).toFixed(1)}` });
    await send('message_start', {
      message: { id: opts.id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: usageOf(opts.inputTokensAtStart, 0) },
    });
  };
  const stopBlock = async () => {
    if (open !== undefined) await send('content_block_stop', { index });
    open = undefined;
  };
  const startBlock = async (kind: 'text' | 'tool_use', block: Record<string, unknown>) => {
    await stopBlock();
    index++;
    open = kind;
    await send('content_block_start', { index, content_block: block });
    if (index === 0) await send('ping', {});
  };

  try {
    const result = await work({
      signal: abort.signal,
      onAttempt: (m) => { firstAttemptAt ??= performance.now(); model = m.id; },
      onText: async (text) => {
        await start();
        if (open !== 'text') await startBlock('text', { type: 'text', text: '' });
        await send('content_block_delta', { index, delta: { type: 'text_delta', text } });
      },
      // A call's first piece (with its id and name) opens its tool_use block; its argument pieces are input_json_delta.
      onToolCall: async (d) => {
        await start();
        if (!toolBlocks.has(d.index)) {
          await startBlock('tool_use', { type: 'tool_use', id: toolUseId(d.id ?? '', opts.id, d.index), name: d.name ?? '', input: {} });
          toolBlocks.set(d.index, index);
        }
        if (d.arguments) await send('content_block_delta', { index: toolBlocks.get(d.index)!, delta: { type: 'input_json_delta', partial_json: d.arguments } });
      },
    });
    model = result.model.id;
    await start();
    await stopBlock();
    await send('message_delta', {
      delta: toStopReason(result.finishReason, result.stopSequence),
      usage: { input_tokens: result.usage.promptTokens, output_tokens: result.usage.completionTokens },
    });
    await send('message_stop', {});
  } catch (error) {
    if (!started) {
      if (error instanceof CancelledError) { // nobody is left to answer
        reply.hijack();
        raw.destroy();
        return;
      }
      throw error; // answered as a plain HTTP error by the plugin's error handler
    }
    if (!(error instanceof CancelledError)) {
      // As Anthropic sends it: {"type": "error", "error": {type, message}} (the request id is in the headers).
      await send('error', { error: describeAnthropicError(request, error).error });
    }
  } finally {
    raw.off('close', onClose);
    if (started && !raw.destroyed) raw.end();
  }
}
