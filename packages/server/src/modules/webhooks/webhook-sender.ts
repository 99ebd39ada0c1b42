import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { privateAddressReason, privateHostReason } from './webhook-address.js';

/** What one attempt got: the HTTP status of the answer (null when none came) and, unless it was a 2xx, why it failed. */
export interface SendOutcome { status: number | null; error: string | null }

export interface SenderOptions {
  /** CODELOOM_WEBHOOK_ALLOW_PRIVATE: loopback and private addresses may be reached. */
  allowPrivate: boolean;
  /** No answer (status line and headers) within this many milliseconds fails the attempt (10 s). */
  timeoutMs: number;
  userAgent: string;
  /** The resolver (tests give one that answers what they need); default dns.lookup. */
  resolve?: typeof dnsLookup;
}

class RefusedAddress extends Error {
  readonly code = 'ERR_WEBHOOK_PRIVATE_ADDRESS';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The `lookup` the connection uses: the name is resolved once, every address it resolves to is checked, and the
 * socket connects to those checked addresses (no second resolution a rebinding DNS server could answer differently).
 */
function checkedLookup(allowPrivate: boolean, resolve: typeof dnsLookup) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!addresses.length) return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), []);
      if (!allowPrivate) {
        for (const a of addresses) {
          const reason = privateAddressReason(a.address);
          if (reason) return callback(new RefusedAddress(`refused: ${hostname} resolves to ${a.address}, ${reason} (CODELOOM_WEBHOOK_ALLOW_PRIVATE is off)`), []);
        }
      }
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

const describe = (error: unknown): string => {
  if (error instanceof RefusedAddress) return error.message;
  const e = error as NodeJS.ErrnoException & { errors?: unknown[] };
  // Several addresses tried at once (autoSelectFamily) fail as one AggregateError: name the first reason.
  if (e?.errors?.length) return describe(e.errors[0]);
  const text = [e?.code, e?.message].filter(Boolean).join(': ');
  return (text || String(error)).slice(0, 500);
};

/**
 * POSTs one delivery: a fresh connection (no pooling: every attempt resolves and checks its host again), no
 * redirect followed (a 3xx is not a 2xx), the answer's body not read.
 */
export function sendWebhook(url: string, body: string, headers: Record<string, string>, options: SenderOptions): Promise<SendOutcome> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ status: null, error: 'not a valid URL' });
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.resolve({ status: null, error: 'not an http(s) URL' });
  // An IP literal is connected to without a lookup: it is judged here.
  const literal = privateHostReason(target.hostname);
  if (literal && !options.allowPrivate) return Promise.resolve({ status: null, error: `refused: ${target.hostname} is ${literal} (CODELOOM_WEBHOOK_ALLOW_PRIVATE is off)` });
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const requestOptions: RequestOptions = {
    method: 'POST',
    agent: false,
    lookup: checkedLookup(options.allowPrivate, options.resolve ?? dnsLookup) as RequestOptions['lookup'],
    headers: { ...headers, 'content-type': 'application/json', 'user-agent': options.userAgent, 'content-length': String(Buffer.byteLength(body)) },
  };
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = request(target, requestOptions, (res) => {
      const status = res.statusCode ?? 0;
      // The status is the answer: the body is not read (a receiver streaming one forever holds nothing open).
      res.on('error', () => {});
      res.destroy();
      finish({ status, error: status >= 200 && status < 300 ? null : `HTTP ${status}` });
    });
    const timer = setTimeout(() => {
      finish({ status: null, error: `no answer within ${Math.round(options.timeoutMs / 100) / 10} s` });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (error) => finish({ status: null, error: describe(error) }));
    req.end(body);
  });
}
