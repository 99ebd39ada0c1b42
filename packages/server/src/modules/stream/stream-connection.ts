import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { ERROR_CODES, type StreamEvent } from '@codeloom/protocol';
import type { AppContext } from '../../context.js';
import { AppError, CancelledError, rateLimited } from '../../errors.js';
import { asDependencyError } from '../../storage/dependency-errors.js';
import { RateLimiter } from '../../limits/rate-limiter.js';
import type { Principal } from '../auth/principal.js';
import type { ConnectionRegistry } from './connection-registry.js';
import { subscribeToRun } from './run-subscription.js';
import { FRAME_TYPES, MAX_FRAME_BYTES, frameErrors, type GenerateFrame } from './stream-frames.js';
import { LiveCredential } from './live-credential.js';
import { FrameRateLimiter, type FrameLimits } from './frame-rate-limiter.js';

export interface ChannelSettings {
  authTimeoutMs: number;
  maxConcurrentPerConnection: number;
  frameLimits: FrameLimits;
}

type ErrorData = { status: number; code: string; message: string; [k: string]: unknown };

/** One WebSocket client: authentication, multiplexed generations, run subscriptions, backpressure. */
export class StreamConnection {
  readonly id = `con_${randomBytes(9).toString('base64url')}`;
  private principal: Principal | null = null;
  /** Revocation, logout and expiry of the credential close the connection (4401). */
  private readonly live: LiveCredential;
  private accountKey: string | undefined;
  private readonly inflight = new Map<string, AbortController>();
  private readonly subscriptions = new Map<string, () => void>();
  private authTimer: NodeJS.Timeout | undefined;
  /** Set while a credential is being checked: frames that arrive meanwhile wait for it, so `auth` then `generate` sent back to back work in order. */
  private authPending: Promise<void> | undefined;
  private shuttingDown = false;
  private drainWait: Promise<void> | undefined;
  private nextId = 0;
  alive = true;

  constructor(
    private readonly ws: WebSocket,
    private readonly request: FastifyRequest,
    private readonly ctx: AppContext,
    private readonly registry: ConnectionRegistry,
    private readonly settings: ChannelSettings,
  ) {
    this.live = new LiveCredential(ctx, (error, reason) => { this.refuse(toErrorData(error), reason); this.cleanup(); });
  }

  start(): void {
    this.registry.add(this);
    const frames = new FrameRateLimiter(this.ws, this.settings.frameLimits);
    this.ws.on('message', (data, isBinary) => { if (frames.admit(data as Buffer)) void this.onMessage(data as Buffer, isBinary); });
    this.ws.on('close', () => this.cleanup());
    this.ws.on('pong', () => { this.alive = true; });
    this.ws.on('error', () => this.cleanup());
    // Resolved here again, not taken from the upgrade's auth hook: `?environment=` then counts as the header does, and a refusal is told why (invalid_token, token_expired, forbidden, …).
    if (this.request.headers.authorization) return void this.authenticateWith(this.request.headers.authorization);
    this.authTimer = setTimeout(() => this.refuse(problemData('unauthorized', `No auth frame within ${this.settings.authTimeoutMs / 1000} s.`)), this.settings.authTimeoutMs);
  }

  /** Resolves a credential; on failure sends the credential error (its own status and code) and closes with 4401. */
  private authenticateWith(authorization: string, environment?: string): Promise<void> {
    clearTimeout(this.authTimer);
    const env = environment ?? this.requestedEnvironment();
    const pending = (async () => {
      let principal: Principal;
      try {
        principal = await this.ctx.credentials.resolve(authorization, env);
      } catch (error) {
        // A bad re-auth frame leaves the credential the socket already holds in force.
        if (error instanceof AppError) return this.principal ? this.sendNow({ event: 'error', data: toErrorData(error) }) : this.refuse(toErrorData(error));
        this.request.log.error({ err: error }, 'channel authentication failed');
        this.sendNow({ event: 'error', data: problemData('service_unavailable', 'The credential could not be checked; reconnect and retry.') });
        this.ws.close(1011, 'internal error');
        return;
      }
      if (this.principal) {
        // A fresh auth frame on an open connection: same account and environment, new credential and expiry.
        const refused = this.live.renew(this.principal, principal, authorization, env);
        if (refused) return this.sendNow({ event: 'error', data: toErrorData(refused) });
        this.principal = principal;
        return this.sendNow({ event: 'connected', data: { connection_id: this.id, user_id: principal.user.id } });
      }
      this.principal = principal;
      this.authenticated();
      if (this.principal) this.live.hold(principal, authorization, env);
    })();
    this.authPending = pending.finally(() => { this.authPending = undefined; });
    return this.authPending;
  }

  private authenticated(): void {
    const p = this.principal!;
    this.accountKey = RateLimiter.subjectFor(p.user.id, p.environment);
    if (!this.registry.claim(this.accountKey)) {
      this.accountKey = undefined;
      this.principal = null;
      this.sendNow({ event: 'error', data: { status: 429, code: 'rate_limited', message: `At most ${this.registry.maxPerAccount} open streaming connections per account; close one first.` } });
      this.ws.close(4429, 'too many connections');
      return;
    }
    this.sendNow({ event: 'connected', data: { connection_id: this.id, user_id: p.user.id } });
  }

  private refuse(data: ErrorData, reason = 'unauthorized'): void {
    this.sendNow({ event: 'error', data });
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(4401, reason);
  }

  private async onMessage(data: Buffer, isBinary: boolean): Promise<void> {
    // Frames are handled in arrival order while a credential is checked (waiters resume first in, first out).
    if (this.authPending) await this.authPending;
    // A closing socket (refused, over the connection limit, 4403, shutdown) starts no more work: nobody would hear of it.
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (isBinary || data.length > MAX_FRAME_BYTES) {
      const problem = isBinary ? problemData('validation_failed', 'Frames are JSON text; binary frames are not accepted.') : problemData('payload_too_large', `Frames are limited to ${MAX_FRAME_BYTES} bytes.`);
      return this.sendNow({ event: 'error', data: problem });
    }
    let frame: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(data.toString('utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      frame = parsed as Record<string, unknown>;
    } catch {
      return this.sendNow({ event: 'error', data: problemData('malformed_json', 'A frame must be a JSON object.') });
    }
    const type = frame.type;
    const id = typeof frame.id === 'string' ? frame.id : undefined;
    if (typeof type !== 'string' || !FRAME_TYPES.includes(type as never)) {
      return this.sendNow({ event: 'error', ...(id ? { id } : {}), data: { ...problemData('validation_failed', `Unknown frame type ${JSON.stringify(type ?? null)}; use one of ${FRAME_TYPES.join(', ')}.`), errors: [{ path: '/type', message: `must be one of: ${FRAME_TYPES.join(', ')}` }] } });
    }
    if (type === 'ping') return this.sendNow({ event: 'pong' });
    const errors = frameErrors(type as 'auth', frame);
    if (errors) return this.sendNow({ event: 'error', ...(id ? { id } : {}), data: { ...problemData('validation_failed', `The ${type} frame does not match the schema.`), errors } });
    if (type === 'auth') return this.onAuth(frame.token as string, frame.environment as string | undefined);
    if (!this.principal) return this.sendNow({ event: 'error', ...(id ? { id } : {}), data: problemData('unauthorized', 'Authenticate first: {"type":"auth","token":"…"}.') });
    if (type === 'cancel') return this.onCancel(frame.id as string);
    if (type === 'subscribe') return this.onSubscribe(frame.run_id as string, frame.after as number | undefined);
    return this.onGenerate(frame as unknown as GenerateFrame);
  }

  private async onAuth(token: string, environment: string | undefined): Promise<void> {
    await this.authenticateWith(`Bearer ${token}`, environment);
  }

  /** Browsers cannot set X-Environment on an upgrade, so `?environment=sandbox` on the URL does the same. */
  private requestedEnvironment(): string | undefined {
    const header = this.request.headers['x-environment'];
    if (typeof header === 'string') return header;
    const query = this.request.query as Record<string, unknown> | undefined;
    return typeof query?.environment === 'string' ? query.environment : undefined;
  }

  private onCancel(id: string): void {
    const controller = this.inflight.get(id);
    if (!controller) return this.sendNow({ event: 'error', id, data: problemData('not_found', `No generation ${id} is running on this connection.`) });
    controller.abort();
  }

  private async onSubscribe(runId: string, after: number | undefined): Promise<void> {
    if (this.subscriptions.has(runId)) return;
    try {
      await this.live.verify();
      const unsubscribe = await subscribeToRun(this.ctx, this.principal!, runId, after, (event) => this.sendNow(event), () => this.subscriptions.delete(runId));
      if (this.ws.readyState !== this.ws.OPEN) return unsubscribe();
      this.subscriptions.set(runId, unsubscribe);
    } catch (error) {
      this.sendNow({ event: 'error', id: runId, data: toErrorData(error) });
    }
  }

  private async onGenerate(frame: GenerateFrame): Promise<void> {
    const principal = this.principal!;
    if (!principal.scopes.includes('write:code')) {
      this.sendNow({ event: 'error', ...(frame.id ? { id: frame.id } : {}), data: problemData('insufficient_scope', 'Generating needs the write:code permission, which this credential does not have.') });
      this.ws.close(4403, 'insufficient_scope');
      return;
    }
    const id = frame.id ?? `r_${this.id.slice(4, 10)}_${++this.nextId}`;
    // The server is stopping: answer at once instead of starting work the shutdown would cut off without a word.
    if (this.shuttingDown) return this.sendNow({ event: 'error', id, data: problemData('shutting_down') });
    if (this.inflight.has(id)) return this.sendNow({ event: 'error', id, data: problemData('conflict', `A generation with id ${id} is already running on this connection.`) });
    if (this.inflight.size >= this.settings.maxConcurrentPerConnection) {
      return this.sendNow({ event: 'error', id, data: problemData('rate_limited', `At most ${this.settings.maxConcurrentPerConnection} generations may run at once on one connection.`) });
    }
    const controller = new AbortController();
    this.inflight.set(id, controller);
    try {
      await this.live.verify();
      const admission = await this.ctx.rateLimiter.admit(RateLimiter.subjectFor(principal.user.id, principal.environment), principal.org.plan, RateLimiter.keyRequestWindows(principal));
      if (!admission.allowed) {
        throw rateLimited(admission.refusedBy, admission.report!, { report: true });
      }
      const { type: _t, id: _i, streamTokens, stream: _s, ...body } = frame;
      const prepared = await this.ctx.generation.prepare(principal, body);
      const result = await this.ctx.generation.run(principal, prepared, {
        signal: controller.signal,
        ...(streamTokens === false ? {} : { onToken: (text: string) => this.send({ event: 'token', id, data: text }, controller.signal) }),
        onEvent: (e) => this.send({ event: e.event, id, data: e.data }, controller.signal),
      });
      this.sendNow({ event: 'complete', id, data: result });
    } catch (error) {
      if (this.ws.readyState !== this.ws.OPEN) return;
      if (error instanceof CancelledError || controller.signal.aborted) {
        const code = this.shuttingDown ? 'shutting_down' : 'cancelled';
        this.sendNow({ event: 'error', id, data: problemData(code, code === 'cancelled' ? `Generation ${id} was cancelled; the model call was aborted.` : undefined) });
      } else {
        if (!(error instanceof AppError)) this.request.log.error({ err: error }, 'channel generation failed');
        this.sendNow({ event: 'error', id, data: toErrorData(error) });
      }
    } finally {
      this.inflight.delete(id);
    }
  }

  /**
   * Sends and, when the client is not keeping up, waits for the socket to drain before the next token is
   * pulled. A cancel or shutdown (`signal`) ends the wait, so the request still ends with its error frame.
   */
  private async send(frame: StreamEvent, signal: AbortSignal): Promise<void> {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(JSON.stringify(frame));
    const socket = (this.ws as unknown as { _socket?: Socket })._socket;
    if (socket?.writableNeedDrain && !socket.destroyed && !signal.aborted) await untilAborted(signal, this.drained(socket));
  }

  /**
   * One wait shared by every generation of the connection, with its listeners removed when it ends: a
   * once()-per-token race would leave a 'close' listener behind on every wait and put one 'drain'
   * listener per running generation on the socket (MaxListenersExceededWarning past 10, memory growth).
   */
  private drained(socket: Socket): Promise<void> {
    this.drainWait ??= new Promise<void>((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        this.drainWait = undefined;
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
    return this.drainWait;
  }

  private sendNow(frame: StreamEvent): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  heartbeat(): void {
    if (!this.alive) { this.ws.terminate(); return; }
    this.alive = false;
    if (this.ws.readyState === this.ws.OPEN) this.ws.ping();
  }

  /** Server stop: every running generation ends with `shutting_down`, then the socket closes with 1001. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    const pending = [...this.inflight.values()];
    for (const c of pending) c.abort();
    const deadline = Date.now() + 2_000;
    while (this.inflight.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1001, 'server shutting down');
  }

  private cleanup(): void {
    clearTimeout(this.authTimer);
    this.live.release();
    for (const c of this.inflight.values()) c.abort();
    for (const unsubscribe of this.subscriptions.values()) unsubscribe();
    this.subscriptions.clear();
    if (this.accountKey) this.registry.release(this.accountKey);
    this.accountKey = undefined;
    this.registry.delete(this);
  }
}

/** Resolves when `wait` settles or `signal` aborts, whichever is first; leaves no listener behind. */
function untilAborted(signal: AbortSignal, wait: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { signal.removeEventListener('abort', done); resolve(); };
    signal.addEventListener('abort', done);
    void wait.then(done, done);
  });
}

function problemData(code: keyof typeof ERROR_CODES, message?: string): ErrorData {
  return { status: ERROR_CODES[code].status, code, message: message ?? ERROR_CODES[code].detail };
}

function toErrorData(error: unknown): ErrorData {
  if (!(error instanceof AppError)) error = asDependencyError(error) ?? error;
  if (!(error instanceof AppError)) return problemData('internal_error');
  const data: ErrorData = problemData(error.code, error.message);
  if (error.extra.errors) data.errors = error.extra.errors;
  const h = error.extra.headers ?? {};
  if (h['retry-after']) data.retry_after = Number(h['retry-after']);
  if (h['x-ratelimit-limit']) data.rate_limit = { limit: Number(h['x-ratelimit-limit']), remaining: Number(h['x-ratelimit-remaining']), reset: Number(h['x-ratelimit-reset']) };
  return data;
}
