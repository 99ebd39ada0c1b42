import { openEventStream } from '../../plugins/sse-streams.js';
import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RegisteredModel } from '../../providers/model-registry.js';
import type { ToolCallDelta } from '../../providers/provider.js';
import { CancelledError } from '../../errors.js';
import { describeOpenAIError } from './openai-errors.js';
import { toFinishReason } from './openai-request.js';
import type { OpenAICallResult } from './openai-service.js';

type Kind = 'chat' | 'completion';

/**
 * OpenAI-style streaming: `data: <chunk>` lines, then `data: [DONE]`. The HTTP head is written only when
 * the first text arrives (or the call ends), so a failure before any output (a 429, an unknown model, an
 * upstream that failed with every fallback) is still a plain HTTP error a client can read. After that, a
 * failure is an in-band `data: {"error": …}` and no [DONE]. A slow reader holds back the model; a reader
 * that leaves aborts it.
 */
export async function streamOpenAI(
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { id: string; kind: Kind; includeUsage: boolean; requestedModel: string },
  work: (io: { signal: AbortSignal; onText: (text: string) => Promise<void>; onToolCall: (delta: ToolCallDelta) => Promise<void>; onAttempt: (model: RegisteredModel) => void }) => Promise<OpenAICallResult>,
): Promise<void> {
  const raw = reply.raw;
  const abort = new AbortController();
  const created = Math.floor(Date.now() / 1000);
  const startedAt = performance.now();
  let model = opts.requestedModel;
  let firstAttemptAt: number | undefined;
  let started = false;
  const onClose = () => { if (!raw.writableFinished) abort.abort(); };
  raw.on('close', onClose);

  const chunk = (choice: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) => ({
    id: opts.id, object: opts.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion', created, model,
    ...(opts.kind === 'chat' ? { system_fingerprint: null } : {}),
    choices: choice ? [{ index: 0, ...choice, logprobs: null }] : [],
    ...(opts.includeUsage ? { usage: null } : {}), ...extra,
  });
  const write = async (payload: unknown) => {
    if (raw.destroyed) return;
    if (!raw.write(`data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`)) await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
  };
  const start = async () => {
    if (started) return;
    started = true;
    const now = performance.now();
    const upstreamFrom = firstAttemptAt ?? now;
    openEventStream(reply, { 'server-timing': `upstream;desc="first token";dur=${(now - upstreamFrom).toFixed(1)}, gateway;dur=${(upstreamFrom - startedAt).toFixed(1)}` });
    if (opts.kind === 'chat') await write(chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null }));
  };
  const text = (t: string) => (opts.kind === 'chat' ? { delta: { content: t }, finish_reason: null } : { text: t, finish_reason: null });

  try {
    const result = await work({
      signal: abort.signal,
      onAttempt: (m) => { firstAttemptAt ??= performance.now(); model = m.id; },
      onText: async (t) => { await start(); await write(chunk(text(t))); },
      // As OpenAI sends them: a call's first chunk has its index, id, type and name with empty arguments; then argument fragments with only the index.
      onToolCall: async (d) => {
        await start();
        if (d.id !== undefined || d.name !== undefined) {
          await write(chunk({ delta: { tool_calls: [{ index: d.index, id: d.id ?? '', type: 'function', function: { name: d.name ?? '', arguments: '' } }] }, finish_reason: null }));
        }
        if (d.arguments) await write(chunk({ delta: { tool_calls: [{ index: d.index, function: { arguments: d.arguments } }] }, finish_reason: null }));
      },
    });
    model = result.model.id;
    await start();
    const finish = toFinishReason(result.finishReason);
    await write(chunk(opts.kind === 'chat' ? { delta: {}, finish_reason: finish } : { text: '', finish_reason: finish }));
    if (opts.includeUsage) {
      const { promptTokens: p, completionTokens: c } = result.usage;
      await write(chunk(undefined, { usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } }));
    }
    await write('[DONE]');
  } catch (error) {
    if (!started) {
      if (error instanceof CancelledError) { // nobody is left to answer
        reply.hijack();
        raw.destroy();
        return;
      }
      throw error; // answered as a plain HTTP error by the route's error handler
    }
    if (!(error instanceof CancelledError)) await write({ error: describeOpenAIError(request, error).error });
  } finally {
    raw.off('close', onClose);
    if (started && !raw.destroyed) raw.end();
  }
}
