import { randomBytes } from 'node:crypto';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a caller's request id only when it is short and harmless; otherwise mint one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  if (typeof header === 'string' && SAFE_ID.test(header)) return header;
  return `req_${randomBytes(12).toString('base64url')}`;
}
