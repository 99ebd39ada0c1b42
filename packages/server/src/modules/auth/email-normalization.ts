import { domainToASCII } from 'node:url';

/**
 * The form accounts are stored and compared under: trimmed, Unicode NFKC
 * (so a fullwidth `ａ@example.com` is `a@example.com`), lower-cased — the
 * domain always, and the local part too, because Codeloom has always
 * treated the whole address case-insensitively (CONTRACT §3) — and an
 * internationalised domain in its ASCII (punycode) form. Dots and `+tags`
 * in the local part are kept: what they mean is up to each mail provider.
 */
export function normalizeEmail(email: string): string {
  const text = email.trim().normalize('NFKC');
  const at = text.lastIndexOf('@');
  if (at < 0) return text.toLowerCase();
  const local = text.slice(0, at).toLowerCase();
  const domain = text.slice(at + 1).toLowerCase();
  return `${local}@${domainToASCII(domain) || domain}`;
}

/** What accounts registered before NFKC normalisation were stored under. */
const legacyNormalizeEmail = (email: string) => email.trim().toLowerCase();

/** The keys to look an existing account up by: the current form first, then the legacy one when it differs. */
export function emailLookupKeys(email: string): string[] {
  const current = normalizeEmail(email);
  const legacy = legacyNormalizeEmail(email);
  return current === legacy ? [current] : [current, legacy];
}
