import { AppError } from '../../errors.js';
import { privateHostReason } from './webhook-address.js';

const invalid = (message: string) => new AppError('validation_failed', `The webhook url ${message}.`, { errors: [{ path: '/url', message }] });

/**
 * A webhook URL as it may be stored: absolute, http or https, and (unless `allowPrivate`) not naming a
 * loopback, private, link-local or unique-local host. Names other than `localhost` are judged again at every
 * delivery, on the addresses they resolve to.
 */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): string {
  const text = raw.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (!url.hostname) throw invalid('must name a host');
  const reason = allowPrivate ? null : privateHostReason(url.hostname);
  if (reason) throw invalid(`names ${url.hostname}, ${reason}: webhooks may not reach loopback, private, link-local or unique-local addresses unless CODELOOM_WEBHOOK_ALLOW_PRIVATE=true`);
  return text;
}
