import { ChannelRenewal, authFrame } from './channel-renewal.js';
import { CodeloomError, errorFromFrame } from './errors.js';
import type { Transport } from './transport.js';

/** The part of a WebSocket this SDK uses; the browser's, undici's and `ws`'s all have it. */
interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

const OPEN = 1;

/** A frame from the server: `{event, id?, data?}` (run token frames also carry `step`). */
export interface Frame {
  event: string;
  id?: string;
  data?: unknown;
  [key: string]: unknown;
}

type FrameListener = (frame: Frame) => void;
type CloseListener = (error: CodeloomError) => void;

function decode(data: unknown): Frame | undefined {
  let text: string | undefined;
  if (typeof data === 'string') text = data;
  else if (data instanceof ArrayBuffer) text = new TextDecoder().decode(data);
  else if (ArrayBuffer.isView(data)) text = new TextDecoder().decode(data);
  if (text === undefined) return undefined;
  try {
    const frame = JSON.parse(text) as unknown;
    return frame && typeof frame === 'object' && typeof (frame as Frame).event === 'string' ? (frame as Frame) : undefined;
  } catch {
    return undefined;
  }
}

/** One authenticated streaming connection. Frames that arrive before `listen()` are kept and delivered then. */
export class Channel {
  private listener: FrameListener | undefined;
  private onClose: CloseListener | undefined;
  private readonly buffered: Frame[] = [];
  private closedWith: CodeloomError | undefined;
  private closing = false;
  private renewal: ChannelRenewal | undefined;

  constructor(private readonly ws: SocketLike) {}

  /** @internal after `connected`: keeps a session credential alive by sending fresh `auth` frames before it expires. */
  keepAlive(transport: Transport, token: string): void {
    this.renewal = new ChannelRenewal(transport, token, (frame) => this.send(frame));
  }

  listen(onFrame: FrameListener, onClose: CloseListener): void {
    this.listener = onFrame;
    this.onClose = onClose;
    for (const f of this.buffered.splice(0)) onFrame(f);
    if (this.closedWith) onClose(this.closedWith);
  }

  /** @internal */
  deliver(frame: Frame): void {
    if (this.renewal?.reply(frame)) return;
    if (this.listener) this.listener(frame);
    else this.buffered.push(frame);
  }

  /** @internal the socket closed after `connected` */
  closed(code: number, reason: string): void {
    this.renewal?.stop();
    if (this.closing) return;
    // 4401: the credential expired or was revoked; its error frame may have been taken for the answer to a renewal.
    this.closedWith = code === 4401 && this.renewal?.refusal?.status === 401 ? this.renewal.refusal : CodeloomError.client('connection_error', `The streaming connection closed (${code}${reason ? ` ${reason}` : ''}).`);
    this.onClose?.(this.closedWith);
  }

  get open(): boolean {
    return this.ws.readyState === OPEN && !this.closing;
  }

  send(frame: Record<string, unknown>): void {
    if (this.ws.readyState !== OPEN) throw CodeloomError.client('connection_error', 'The streaming connection is not open.');
    this.ws.send(JSON.stringify(frame));
  }

  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.renewal?.stop();
    try { this.ws.close(1000, 'done'); } catch { /* already closed */ }
  }
}

export function streamUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`)}/api/v1/stream`;
}

/**
 * Opens `/api/v1/stream` and authenticates with a first `auth` frame (which
 * works in browsers, where the upgrade cannot carry headers). In the sandbox
 * the frame says so (authFrame), and the `X-Environment` header is also
 * passed as the `ws` package's options argument (browsers ignore it). A session token that has
 * expired is refreshed before connecting, or once after the server refuses it as expired;
 * while the connection is open it is renewed before it expires (channel-renewal.ts).
 */
export async function openChannel(transport: Transport, options: { signal?: AbortSignal; timeout?: number } = {}): Promise<Channel> {
  const Ctor = transport.options.WebSocket;
  if (!Ctor) throw new TypeError('No WebSocket implementation: pass options.WebSocket (in Node 20: `import WebSocket from "ws"`).');
  await transport.ensureFresh(5, options.signal);
  const token = transport.credential();
  if (!token) throw CodeloomError.client('not_authenticated');
  try {
    return await connectOnce(transport, token, options);
  } catch (error) {
    // token_expired, or the bare `unauthorized` of servers that do not say why a channel credential was refused.
    const expired = CodeloomError.isInstance(error) && error.status === 401 && (error.code === 'token_expired' || error.code === 'unauthorized');
    if (!expired || !transport.canRefresh()) throw error;
    await transport.refreshAfterExpiry(token, options.signal);
    return connectOnce(transport, transport.credential()!, options);
  }
}

function connectOnce(transport: Transport, token: string, options: { signal?: AbortSignal; timeout?: number }): Promise<Channel> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(CodeloomError.client('cancelled'));
  const Ctor = transport.options.WebSocket!;
  const wsOptions = transport.options.environment === 'sandbox' ? { headers: { 'x-environment': 'sandbox' } } : undefined;
  const ws = new Ctor(streamUrl(transport.options.baseUrl), undefined, wsOptions) as SocketLike;
  const channel = new Channel(ws);
  return new Promise<Channel>((resolve, reject) => {
    let connected = false;
    let refusal: CodeloomError | undefined;
    const timeoutMs = options.timeout ?? transport.options.timeout;
    const fail = (error: CodeloomError) => {
      if (connected) return;
      connected = true; // settled
      cleanup();
      try { ws.close(); } catch { /* not open yet */ }
      reject(error);
    };
    const timer = setTimeout(() => fail(CodeloomError.client('timeout', `The streaming connection was not ready within ${timeoutMs} ms.`)), timeoutMs);
    const onAbort = () => fail(CodeloomError.client('cancelled'));
    signal?.addEventListener('abort', onAbort, { once: true });
    const cleanup = () => { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); };

    ws.onopen = () => {
      try { ws.send(JSON.stringify(authFrame(transport, token))); } catch (e) { fail(CodeloomError.client('connection_error', undefined, e)); }
    };
    ws.onmessage = (ev) => {
      const frame = decode(ev.data);
      if (!frame) return;
      if (connected) return channel.deliver(frame);
      if (frame.event === 'connected') {
        connected = true;
        cleanup();
        channel.keepAlive(transport, token);
        resolve(channel);
      } else if (frame.event === 'error') {
        refusal = errorFromFrame(frame.data);
        fail(refusal);
      }
    };
    ws.onerror = () => { /* onclose follows with the code */ };
    ws.onclose = (ev) => {
      if (connected) return channel.closed(ev?.code ?? 1006, ev?.reason ?? '');
      fail(refusal ?? CodeloomError.client('connection_error', `Could not open the streaming connection (${ev?.code ?? 1006}${ev?.reason ? ` ${ev.reason}` : ''}).`));
    };
  });
}

/** A single-consumer async queue: items, then an end or an error (delivered after the items). */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private readonly waiters: Array<{ resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void }> = [];
  private ended = false;
  private error: unknown;

  constructor(private readonly onReturn?: () => void) {}

  push(item: T): void {
    if (this.ended) return;
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve({ value: item, done: false });
    else this.items.push(item);
  }

  /** Drops the items not read yet (a cancel: nothing more is delivered). */
  discard(): void {
    this.items.length = 0;
  }

  end(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const waiters = this.waiters.splice(0);
    // Waiters exist only when no items are left: the first one gets the error, later reads see the end.
    if (error !== undefined && waiters.length) waiters.shift()!.reject(error);
    else this.error = error;
    for (const w of waiters) w.resolve({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.ended) {
      const error = this.error;
      this.error = undefined;
      return error !== undefined ? Promise.reject(error) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<T>> {
    this.items.length = 0;
    this.end();
    this.onReturn?.();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
