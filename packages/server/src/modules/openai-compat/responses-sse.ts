import { openEventStream } from '../../plugins/sse-streams.js';
import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ToolCallDelta } from '../../providers/provider.js';
import type { ModelCallResult } from '../generate/model-call.js';
import { CancelledError } from '../../errors.js';
import { describeOpenAIError } from './openai-errors.js';
import type { ResponsesCallSpec } from './responses-request.js';
import { messageItem, responseObject, statusOf, wireId, type FunctionCallItem, type ItemStatus, type MessageItem, type OutputItem, type ResponseHead, type ResponseObject } from './responses-object.js';
import { ResponsesWireError, type ResponsesIO } from './responses-service.js';

/** One Responses API stream event: its type, payload and sequence number, as `event: <type>` / `data: <json>`. */
export type Emit = (type: string, payload: Record<string, unknown>) => Promise<void>;

/**
 * Output items as they stream, with the events OpenAI sends for them: a message item opens with
 * `output_item.added` and `content_part.added`, grows by `output_text.delta` and closes with `output_text.done`,
 * `content_part.done` and `output_item.done`; a function call opens with `output_item.added`, grows by
 * `function_call_arguments.delta` and closes with `function_call_arguments.done` and `output_item.done`. An item
 * closes when the next one opens, or at the end.
 */
export class OutputStream {
  readonly items: OutputItem[] = [];
  private message: { item: MessageItem; index: number; text: string[] } | undefined;
  private call: { item: FunctionCallItem; index: number } | undefined;
  private readonly calls = new Map<number, { item: FunctionCallItem; index: number }>();

  constructor(private readonly emit: Emit) {}

  async text(delta: string): Promise<void> {
    if (!this.message) {
      await this.closeCall('completed');
      const item = messageItem(wireId('msg'), '', 'in_progress');
      const index = this.items.push(item) - 1;
      this.message = { item, index, text: [] };
      await this.emit('response.output_item.added', { output_index: index, item: { ...item, content: [] } });
      await this.emit('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
    }
    this.message.text.push(delta);
    await this.emit('response.output_text.delta', { item_id: this.message.item.id, output_index: this.message.index, content_index: 0, delta, logprobs: [] });
  }

  async toolCall(d: ToolCallDelta): Promise<void> {
    let open = this.calls.get(d.index);
    if (!open) {
      await this.closeMessage('completed');
      await this.closeCall('completed');
      const item: FunctionCallItem = { id: wireId('fc'), type: 'function_call', status: 'in_progress', arguments: '', call_id: d.id || wireId('call'), name: d.name ?? '' };
      open = { item, index: this.items.push(item) - 1 };
      this.calls.set(d.index, open);
      this.call = open;
      await this.emit('response.output_item.added', { output_index: open.index, item: { ...item } });
    } else if (d.name && !open.item.name) {
      open.item.name = d.name;
    }
    if (d.arguments) {
      open.item.arguments += d.arguments;
      await this.emit('response.function_call_arguments.delta', { item_id: open.item.id, output_index: open.index, delta: d.arguments });
    }
  }

  /** Closes what is open (an answer without output gets one empty message, as a JSON answer has) and returns the items. */
  async finish(result: Pick<ModelCallResult, 'finishReason'>): Promise<OutputItem[]> {
    const status = statusOf(result.finishReason).status;
    if (this.items.length === 0) await this.text('');
    await this.closeMessage(status);
    await this.closeCall(status);
    return this.items;
  }

  private async closeMessage(status: ItemStatus): Promise<void> {
    const open = this.message;
    if (!open) return;
    this.message = undefined;
    const text = open.text.join('');
    const part = { type: 'output_text' as const, annotations: [] as never[], logprobs: [] as never[], text };
    await this.emit('response.output_text.done', { item_id: open.item.id, output_index: open.index, content_index: 0, text, logprobs: [] });
    await this.emit('response.content_part.done', { item_id: open.item.id, output_index: open.index, content_index: 0, part });
    Object.assign(open.item, { status, content: [part] });
    await this.emit('response.output_item.done', { output_index: open.index, item: open.item });
  }

  private async closeCall(status: ItemStatus): Promise<void> {
    const open = this.call;
    if (!open) return;
    this.call = undefined;
    open.item.status = status;
    await this.emit('response.function_call_arguments.done', { item_id: open.item.id, output_index: open.index, name: open.item.name, arguments: open.item.arguments });
    await this.emit('response.output_item.done', { output_index: open.index, item: open.item });
  }
}

/**
 * A streamed response (`"stream": true`): the HTTP head and `response.created` / `response.in_progress` are
 * written when the first output arrives (or the call ends), so a failure before any output (a 429, an unknown
 * model, a previous response not found) is still a plain HTTP error in OpenAI's shape. After that a failure is
 * `response.failed` (its `error` says why). The last event is `response.completed`, or `response.incomplete`
 * when the output cap or a content filter cut the answer.
 */
export async function streamResponses(
  request: FastifyRequest,
  reply: FastifyReply,
  spec: ResponsesCallSpec,
  run: (io: ResponsesIO) => Promise<ResponseObject>,
): Promise<void> {
  const raw = reply.raw;
  const abort = new AbortController();
  const startedAt = performance.now();
  let firstAttemptAt: number | undefined;
  let head: ResponseHead | undefined;
  let started = false;
  let sequence = 0;
  const onClose = () => { if (!raw.writableFinished) abort.abort(); };
  raw.on('close', onClose);

  const write = async (type: string, payload: Record<string, unknown>) => {
    if (raw.destroyed) return;
    const data = JSON.stringify({ type, ...payload, sequence_number: sequence++ });
    if (!raw.write(`event: ${type}\ndata: ${data}\n\n`)) await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
  };
  const output = new OutputStream(async (type, payload) => { await start(); await write(type, payload); });
  const inProgress = () => responseObject(head!, spec, { status: 'in_progress', output: [], usage: null });
  async function start() {
    if (started) return;
    started = true;
    const now = performance.now();
    const upstreamFrom = firstAttemptAt ?? now;
    openEventStream(reply, { 'server-timing': `upstream;desc="first token";dur=${(now - upstreamFrom).toFixed(1)}, gateway;dur=${(upstreamFrom - startedAt).toFixed(1)}` });
    await write('response.created', { response: inProgress() });
    await write('response.in_progress', { response: inProgress() });
  }

  try {
    const response = await run({
      signal: abort.signal,
      onStart: (h) => { head = h; },
      onAttempt: (m) => { firstAttemptAt ??= performance.now(); head = { ...head!, model: m.id }; },
      onText: (t) => output.text(t),
      onToolCall: (d) => output.toolCall(d),
      output: (result) => output.finish(result),
    });
    await start();
    await write(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  } catch (error) {
    if (!started) {
      if (error instanceof CancelledError) { // nobody is left to answer
        reply.hijack();
        raw.destroy();
        return;
      }
      throw error; // answered as a plain HTTP error by the route's error handler
    }
    if (!(error instanceof CancelledError)) {
      const described = error instanceof ResponsesWireError ? error.body : describeOpenAIError(request, error).error;
      await write('response.failed', { response: responseObject(head!, spec, { status: 'failed', output: output.items, usage: null, error: { code: described.code ?? 'server_error', message: described.message } }) });
    }
  } finally {
    raw.off('close', onClose);
    if (started && !raw.destroyed) raw.end();
  }
}
