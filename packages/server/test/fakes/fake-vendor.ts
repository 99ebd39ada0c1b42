/**
 * Shared machinery of the fake model vendors (openai-fake.ts,
 * anthropic-fake.ts): a real node:http server on 127.0.0.1 with a random
 * port, request recording, scripted failures and client-abort detection.
 * The vendor files only supply their wire format (VendorFormat).
 *
 * Every behaviour is scripted with `fake.script({...})` (merged into the
 * current script; `fake.reset()` restores defaults and clears records):
 *
 *   reply            text of the answer (default "Hello from the fake vendor.")
 *   chunks           exact stream deltas (default: reply split after each word)
 *   usage            { promptTokens, completionTokens } to report
 *                    (default: words in the request / number of chunks sent)
 *   countTokens      report true counts instead: the request's prompt by the fake's
 *                    tokenizer (fake-tokenizer.ts) / number of chunks sent (one token each)
 *   honourMaxTokens  stop after max_tokens chunks with the vendor's "length" finish
 *                    reason, as real vendors do (default: every chunk is sent whatever
 *                    max_tokens says, as by an upstream that ignores it)
 *   omitUsage        report no usage at all (no usage chunk, even when asked; none in JSON)
 *   finishReason     the vendor's own value ('stop', 'length' / 'end_turn', 'max_tokens')
 *   failNext         { count, status, retryAfter?, message? }: the next `count`
 *                    requests get that status with the vendor's error body
 *   resetNext        destroy the socket of the next N requests without answering
 *   hang             accept requests and never answer
 *   hangAfterChunks  stream K deltas, then go silent with the socket open
 *   cutAfterChunks   stream K deltas, then destroy the socket (a cut stream)
 *   errorAfterChunks stream K deltas, then the vendor's in-band error event
 *   chunkDelayMs     pause between stream deltas
 *   requireApiKey    answer 401 unless the request carries this key
 *   toolCalls        [{ id?, name, arguments }]: the answer calls these tools (after any `reply`
 *                    text; set reply '' for calls only), in the vendor's wire format — OpenAI
 *                    `tool_calls` / streamed `delta.tool_calls`, Anthropic `tool_use` blocks /
 *                    `input_json_delta`; the finish reason is then `tool_calls` / `tool_use`
 *
 * `fake.aborts` counts requests whose socket closed before the fake finished
 * answering (and not because the script destroyed it); `waitForAborts(n)`
 * resolves once that count reaches n.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakePromptTokens } from './fake-tokenizer.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it was not JSON. */
  body: any;
}

export interface FakeUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface FakeScript {
  reply: string;
  /** Answered in turn, one per request (then `reply`): e.g. broken code, then its fix. */
  replies?: string[];
  chunks?: string[];
  usage?: FakeUsage;
  countTokens?: boolean;
  honourMaxTokens?: boolean;
  omitUsage?: boolean;
  finishReason?: string;
  failNext?: { count: number; status: number; retryAfter?: number | string; message?: string; /** The vendor's own error code where its format has one (OpenAI's `error.code`), e.g. context_length_exceeded. */ code?: string; param?: string };
  resetNext?: number;
  hang?: boolean;
  hangAfterChunks?: number;
  cutAfterChunks?: number;
  errorAfterChunks?: number;
  chunkDelayMs?: number;
  requireApiKey?: string;
  toolCalls?: FakeToolCall[];
  /**
   * Decides each answer from the request (e.g. the last tool result): its text (`reply`, '' for none) and its
   * tool calls; undefined falls back to the rest of the script. Takes precedence over `replies` and `toolCalls`.
   */
  respond?: (body: any) => { reply?: string; toolCalls?: FakeToolCall[] } | undefined;
}

/** A tool call a fake answers with: `arguments` is JSON text (streamed in pieces of FAKE_ARGUMENT_PIECE characters). */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string;
}

/** Characters per streamed piece of a tool call's arguments. */
export const FAKE_ARGUMENT_PIECE = 7;

/** A scripted call's arguments as the stream sends them. */
export const argumentPieces = (args: string): string[] => args.match(new RegExp(`[\\s\\S]{1,${FAKE_ARGUMENT_PIECE}}`, 'g')) ?? [];

export interface FakeVendor {
  /** Origin, e.g. http://127.0.0.1:43121 (providers add /v1 themselves). */
  readonly url: string;
  /** Every request received, oldest first (empty when started with record: false). */
  readonly requests: RecordedRequest[];
  /** Merges into the current script. */
  script(patch: Partial<FakeScript>): void;
  /** Default script, no records, abort count zero. */
  reset(): void;
  readonly aborts: number;
  waitForAborts(count?: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface FakeOptions {
  /** Initial script. */
  script?: Partial<FakeScript>;
  /** Set false for benchmarks so memory does not grow with every request. */
  record?: boolean;
}

/** What a vendor file provides: its path, auth header, bodies and SSE frames. */
export interface VendorFormat {
  path: string;
  /** Further paths answered with the same script (e.g. OpenAI's legacy /v1/completions). */
  otherPaths?: string[];
  apiKeyOf(headers: IncomingHttpHeaders): string | undefined;
  errorBody(status: number, message: string, code?: string, param?: string): unknown;
  json(reply: ReplyContext, text: string): unknown;
  streamHead(reply: ReplyContext): string[];
  streamDelta(reply: ReplyContext, text: string): string;
  streamTail(reply: ReplyContext): string[];
  streamError(reply: ReplyContext, message: string): string;
  /** The vendor's finish reason for an answer stopped at max_tokens ('length', 'max_tokens'). */
  lengthReason: string;
}

/** Per-answer facts handed to the format: the parsed request, a fresh id, what to report. */
export interface ReplyContext {
  req: any;
  id: number;
  model: string;
  usage: FakeUsage;
  /** Send no usage anywhere (script `omitUsage`). */
  omitUsage: boolean;
  finishReason: string | undefined;
  /** The scripted tool calls, each with an id (`call_fake…` unless scripted). */
  toolCalls: Array<Required<FakeToolCall>>;
  /** Whether the answer has text before its tool calls. */
  hasText: boolean;
}

let replySeq = 0;

const DEFAULT_SCRIPT: FakeScript = { reply: 'Hello from the fake vendor.' };

const countWords = (value: unknown): number => {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  return text.split(/\s+/).filter(Boolean).length;
};

export async function startFakeVendor(format: VendorFormat, options: FakeOptions = {}): Promise<FakeVendor> {
  let script: FakeScript = { ...DEFAULT_SCRIPT, ...options.script };
  const requests: RecordedRequest[] = [];
  const record = options.record ?? true;
  let aborts = 0;
  let closing = false;
  const abortWaiters = new Set<() => void>();

  const noteAbort = () => {
    aborts++;
    for (const wake of abortWaiters) wake();
  };

  const sendError = (res: ServerResponse, status: number, message: string, retryAfter?: number | string, code?: string, param?: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
    res.writeHead(status, headers).end(JSON.stringify(format.errorBody(status, message, code, param)));
  };

  const write = (res: ServerResponse, frame: string) => new Promise<void>((resolve) => res.write(frame, () => resolve()));
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    let body: any = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // keep raw text
    }
    const path = req.url ?? '/';
    if (record) requests.push({ method: req.method ?? '', path, headers: req.headers, body });

    let selfDestroyed = false;
    const destroy = () => {
      selfDestroyed = true;
      req.socket.destroy();
    };
    res.on('close', () => {
      if (!res.writableFinished && !selfDestroyed && !closing) noteAbort();
    });

    const s = script;
    if (s.resetNext && s.resetNext > 0) {
      s.resetNext--;
      return destroy();
    }
    if (s.failNext && s.failNext.count > 0) {
      s.failNext.count--;
      return sendError(res, s.failNext.status, s.failNext.message ?? `scripted failure (HTTP ${s.failNext.status})`, s.failNext.retryAfter, s.failNext.code, s.failNext.param);
    }
    const route = path.split('?')[0]!;
    if (req.method !== 'POST' || (route !== format.path && !format.otherPaths?.includes(route))) return sendError(res, 404, `no route for ${req.method} ${path}`);
    if (s.requireApiKey !== undefined && format.apiKeyOf(req.headers) !== s.requireApiKey) {
      const presented = format.apiKeyOf(req.headers) ?? '';
      // Real vendors echo a masked key; this lets tests check it never leaks further.
      return sendError(res, 401, `Incorrect API key provided: ${presented}`);
    }
    if (s.hang) return;

    const decided = s.respond?.(body);
    const queued = decided ? decided.reply ?? '' : s.replies?.shift();
    let chunks = queued !== undefined ? queued.match(/\S+\s*|\s+/g) ?? [] : s.chunks ?? s.reply.match(/\S+\s*|\s+/g) ?? [];
    const maxTokens = typeof body?.max_tokens === 'number' ? body.max_tokens : undefined;
    let finishReason = s.finishReason;
    if (s.honourMaxTokens && maxTokens !== undefined && chunks.length > maxTokens) {
      chunks = chunks.slice(0, maxTokens);
      finishReason = format.lengthReason;
    }
    const usage = s.usage ?? {
      promptTokens: s.countTokens ? fakePromptTokens(body) : countWords(body?.messages ?? body?.prompt) + countWords(body?.system) + (body?.suffix ? countWords(body.suffix) : 0),
      completionTokens: chunks.length,
    };
    const id = ++replySeq;
    const toolCalls = ((decided ? decided.toolCalls : s.toolCalls) ?? []).map((c, i) => ({ id: c.id ?? `call_fake${id}x${i}`, name: c.name, arguments: c.arguments }));
    if (toolCalls.length && s.usage === undefined) usage.completionTokens += toolCalls.reduce((n, c) => n + 1 + argumentPieces(c.arguments).length, 0);
    const ctx: ReplyContext = { req: body, id, model: body?.model ?? 'fake', usage, omitUsage: s.omitUsage === true, finishReason, toolCalls, hasText: chunks.length > 0 };
    if (body?.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(format.json(ctx, chunks.join(''))));
      return;
    }

    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const frame of format.streamHead(ctx)) await write(res, frame);
    for (let i = 0; i < chunks.length; i++) {
      if (i === s.cutAfterChunks) return destroy();
      if (i === s.hangAfterChunks) return;
      if (i === s.errorAfterChunks) {
        await write(res, format.streamError(ctx, 'scripted in-band failure'));
        return void res.end();
      }
      if (s.chunkDelayMs && i > 0) await pause(s.chunkDelayMs);
      if (res.destroyed) return;
      await write(res, format.streamDelta(ctx, chunks[i]!));
    }
    if (s.cutAfterChunks !== undefined && s.cutAfterChunks >= chunks.length) return destroy();
    for (const frame of format.streamTail(ctx)) await write(res, frame);
    res.end();
  }

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(parts).toString('utf8')).catch(() => req.socket.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script(patch) {
      script = { ...script, ...patch, failNext: patch.failNext ? { ...patch.failNext } : script.failNext };
    },
    reset() {
      script = { ...DEFAULT_SCRIPT, ...options.script };
      requests.length = 0;
      aborts = 0;
    },
    get aborts() {
      return aborts;
    },
    waitForAborts(count = 1, timeoutMs = 2_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (aborts < count) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`fake vendor: expected ${count} client abort(s) within ${timeoutMs} ms, saw ${aborts}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          abortWaiters.delete(check);
        };
        abortWaiters.add(check);
        check();
      });
    },
    async close() {
      closing = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
