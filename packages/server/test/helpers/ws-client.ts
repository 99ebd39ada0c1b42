/**
 * A WebSocket test client for the streaming channel (/api/v1/stream), shared by the
 * stream-*.e2e tests: `WsClient` records every frame and the close; `openWs` only opens
 * the socket, `connect` opens it with a token and waits for the `connected` frame.
 */
import WebSocket from 'ws';
import { expect } from 'vitest';
import { nextIp } from './test-server.js';
import { request } from './http.js';
import { awayFromWindowEnd } from './limit-windows.js';

export type Frame = { event: string; id?: string; data?: any };

export type WsClientOptions = {
  /** Default wait for a frame, in ms (10 s unless told). */
  timeoutMs?: number;
  /** Whether `result` also checks that no frame of the request follows its end frame (true unless told). */
  checkAfterEnd?: boolean;
};

/** A real `ws` client that records every frame and the close. */
export class WsClient {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly wake = new Set<() => void>();
  private readonly timeoutMs: number;
  private readonly checkAfterEnd: boolean;
  constructor(readonly ws: WebSocket, opts: WsClientOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.checkAfterEnd = opts.checkAfterEnd ?? true;
    ws.on('message', (raw) => { this.frames.push(JSON.parse(String(raw))); this.notify(); });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => { resolve({ code, reason: String(reason) }); this.notify(); }));
  }
  private notify() { for (const w of this.wake) w(); }
  /** Sends an object as JSON; a string as it is. */
  send(frame: unknown) { this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame)); }
  waitFor(pred: (f: Frame) => boolean, from = 0, timeoutMs = this.timeoutMs): Promise<Frame> {
    return new Promise((resolve, reject) => {
      let pos = from;
      const check = () => {
        for (; pos < this.frames.length; pos++) if (pred(this.frames[pos]!)) { done(); return resolve(this.frames[pos]!); }
      };
      const timer = setTimeout(() => { done(); reject(new Error(`no matching frame in ${timeoutMs} ms; last: ${JSON.stringify(this.frames.slice(-3)).slice(0, 600)}`)); }, timeoutMs);
      const done = () => { clearTimeout(timer); this.wake.delete(check); };
      this.wake.add(check);
      check();
    });
  }
  /** Waits for request `id` to end; its token texts (all before the end frame), the end frame and all its frames. */
  async result(id: string, timeoutMs?: number) {
    const end = await this.waitFor((f) => f.id === id && (f.event === 'complete' || f.event === 'error'), 0, timeoutMs);
    const tokens = this.frames.filter((f) => f.id === id && f.event === 'token');
    if (this.checkAfterEnd) {
      expect(this.frames.slice(this.frames.indexOf(end) + 1).filter((f) => f.id === id), `frames after the end of ${id}`).toEqual([]);
    }
    return { end, tokens: tokens.map((f) => f.data as string), frames: this.frames.filter((f) => f.id === id) };
  }
  /** Sends a ping; the pong. */
  async ping() {
    const mark = this.frames.length;
    this.send({ type: 'ping' });
    return this.waitFor((f) => f.event === 'pong', mark);
  }
}

/** Closes the socket and waits for the close. */
export const bye = async (c: WsClient) => { c.ws.close(); await c.closed; };

export type OpenWsOptions = WsClientOptions & { token?: string; headers?: Record<string, string>; path?: string };

/** Opens a socket (from a fresh IP; with the token as a Bearer header if given); resolves once open, before any frame. */
export function openWs(base: string, opts: OpenWsOptions = {}): Promise<WsClient> {
  const headers: Record<string, string> = { 'x-forwarded-for': nextIp(), ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}${opts.path ?? '/api/v1/stream'}`, { headers });
  const client = new WsClient(ws, opts);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Opens an authenticated socket and waits for its `connected` frame. */
export async function connect(base: string, token: string, opts: Omit<OpenWsOptions, 'token'> = {}): Promise<WsClient> {
  const client = await openWs(base, { ...opts, token });
  await client.waitFor((f) => f.event === 'connected');
  return client;
}

/**
 * Spends the account's request budget over HTTP on `httpBase` until a 429, then sends a
 * small sandbox generate `id` on `c`; its result.
 */
export async function generateOverBudget(c: WsClient, httpBase: string, token: string, id = 'over') {
  await awayFromWindowEnd(5); // spend the minute's requests and send the generate inside one window
  let last = 0;
  for (let i = 0; i < 120 && last !== 429; i++) last = (await request(`${httpBase}/api/v1/user/profile`, { token })).status;
  expect(last).toBe(429);
  c.send({ type: 'generate', id, prompt: 'hello world script', language: 'bash', model: 'sandbox' });
  return c.result(id);
}
