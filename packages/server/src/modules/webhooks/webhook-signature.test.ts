import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mintWebhookSecret, signatureHeader, verifySignatureHeader, webhookSignature } from './webhook-signature.js';

describe('webhook signature', () => {
  const secret = 'whsec_test_secret';
  const body = '{"id":"evt_1","type":"run.succeeded","created_at":"2026-01-01T00:00:00.000Z","data":{}}';

  it('is t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>', () => {
    const header = signatureHeader(secret, body, 1_700_000_000);
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    expect(header).toBe(`t=1700000000,v1=${expected}`);
    expect(webhookSignature(secret, 1_700_000_000, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('verifies with the right secret and body within the tolerance, and nothing else', () => {
    const now = 1_700_000_000;
    const header = signatureHeader(secret, body, now);
    expect(verifySignatureHeader(secret, body, header, 300, now + 10)).toBe(true);
    expect(verifySignatureHeader('whsec_other', body, header, 300, now)).toBe(false);
    expect(verifySignatureHeader(secret, `${body} `, header, 300, now)).toBe(false);
    expect(verifySignatureHeader(secret, body, header, 300, now + 301)).toBe(false);
    expect(verifySignatureHeader(secret, body, header.replace(/v1=../, 'v1=00'), 300, now)).toBe(false);
    expect(verifySignatureHeader(secret, body, 'garbage', 300, now)).toBe(false);
  });

  it('secrets are whsec_ and 256 random bits, never the same twice', () => {
    const a = mintWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(mintWebhookSecret()).not.toBe(a);
  });
});
