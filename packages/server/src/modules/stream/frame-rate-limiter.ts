import type { WebSocket } from 'ws';
import { wholeSeconds } from '../../errors.js';

export interface FrameLimits {
  /** Frames per second a connection may send, sustained (the bucket refills at this rate). */
  perSecond: number;
  /** Frames a connection may send at once after a pause (the bucket's size). */
  burst: number;
  /** Refused frames within ABUSE_WINDOW_MS that close the connection with 1008. */
  refusalsBeforeClose: number;
}

/** A frame costs 1, plus 1 per started 16 KiB past the first: a flood of large frames runs dry sooner. */
const BYTES_PER_TOKEN = 16 * 1024;
const ABUSE_WINDOW_MS = 10_000;
/** At most one rate_limited error frame per second: a flood must not make the server write a flood back. */
const NOTICE_INTERVAL_MS = 1_000;

/**
 * Per-connection limit on client frames of every kind (pings, bad JSON,
 * binary and oversized frames included), checked before a frame is parsed.
 * Over the limit a frame is dropped and the client hears an `error` frame
 * (rate_limited, with retry_after); a client that keeps sending regardless is
 * closed with 1008 (policy violation).
 */
export class FrameRateLimiter {
  private tokens: number;
  private last = Date.now();
  private refusals = 0;
  private windowStart = 0;
  private lastNotice = 0;

  constructor(private readonly ws: WebSocket, private readonly limits: FrameLimits) {
    this.tokens = limits.burst;
  }

  /** True when the frame may be handled; false when it was refused (and the client told, or closed). */
  admit(data: Buffer | ArrayBuffer | Buffer[]): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.limits.burst, this.tokens + ((now - this.last) / 1000) * this.limits.perSecond);
    this.last = now;
    const cost = 1 + Math.floor(Math.max(0, byteLength(data) - 1) / BYTES_PER_TOKEN);
    if (this.tokens >= cost) {
      this.tokens -= cost;
      return true;
    }
    this.refuse(now);
    return false;
  }

  private refuse(now: number): void {
    if (now - this.windowStart > ABUSE_WINDOW_MS) {
      this.windowStart = now;
      this.refusals = 0;
    }
    this.refusals += 1;
    if (this.ws.readyState !== this.ws.OPEN) return;
    if (this.refusals > this.limits.refusalsBeforeClose) {
      this.ws.close(1008, 'frame rate limit exceeded');
      return;
    }
    if (now - this.lastNotice < NOTICE_INTERVAL_MS) return;
    this.lastNotice = now;
    const retryAfter = wholeSeconds((1 - this.tokens) / this.limits.perSecond);
    this.ws.send(JSON.stringify({
      event: 'error',
      data: {
        status: 429, code: 'rate_limited', retry_after: retryAfter,
        message: `Frames are limited to ${this.limits.perSecond} per second (bursts of ${this.limits.burst}); frames over the limit are dropped, and a connection that keeps sending is closed with 1008.`,
      },
    }));
  }
}

function byteLength(data: Buffer | ArrayBuffer | Buffer[]): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data.byteLength;
}
