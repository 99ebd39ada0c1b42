import { randomBytes } from 'node:crypto';

// Unique, not secret: a random per-process part plus a counter is cheaper than fresh randomness per request.
const PROCESS_PART = randomBytes(6).toString('base64url');
let counter = 0;

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a caller's request id only when it is short and harmless; otherwise mint one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  if (typeof header === 'string' && SAFE_ID.test(header)) return header;
  return `req_${PROCESS_PART}${(counter++).toString(36).padStart(6, '0')}`;
}
