import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A webhook's signing key: 256 random bits. Kept as it is (it must sign), returned once, never logged. */
export const mintWebhookSecret = (): string => WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64url');

/** Hex HMAC-SHA256 of `<t>.<raw body>` keyed with the whole secret string (`whsec_…`, UTF-8). */
export const webhookSignature = (secret: string, timestamp: number, body: string): string =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

/** The `Codeloom-Signature` header of one attempt: `t=<unix seconds>,v1=<hex>`. */
export const signatureHeader = (secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): string =>
  `t=${timestamp},v1=${webhookSignature(secret, timestamp, body)}`;

/**
 * What a receiver does (docs/api.md shows it): parse the header, recompute the HMAC over the raw body,
 * compare in constant time, and refuse a timestamp older than `toleranceSec`.
 */
export function verifySignatureHeader(secret: string, body: string, header: string, toleranceSec = 300, now = Math.floor(Date.now() / 1000)): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(now - t) > toleranceSec) return false;
  const expected = Buffer.from(webhookSignature(secret, t, body), 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
