/**
 * CODELOOM_LOG_BODIES=redacted: what a logged body must not keep. Each pattern keeps a short, recognisable
 * head (so a reader sees what was there) and masks the rest.
 */
const PATTERNS: Array<[RegExp, string]> = [
  // Authorization headers and bearer tokens in any text.
  [/\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1$2[REDACTED]'],
  // Codeloom's own credentials: API keys, refresh tokens, OAuth secrets.
  [/\b(cl_live_|cl_test_|clr_|clo_at_|clo_rt_|clo_ac_|clo_cs_)[A-Za-z0-9_-]{6,}/g, '$1[REDACTED]'],
  // OpenAI-style and Anthropic keys (sk-…, sk-proj-…, sk-ant-…).
  [/\bsk-[A-Za-z0-9_-]{8,}/g, 'sk-[REDACTED]'],
  // Other well-known key shapes: AWS access keys, GitHub and Slack tokens, Google API keys.
  [/\b(AKIA|ASIA)[A-Z0-9]{16}\b/g, '$1[REDACTED]'],
  [/\b(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|xox[abprs]-)[A-Za-z0-9_-]{10,}/g, '$1[REDACTED]'],
  [/\bAIza[A-Za-z0-9_-]{30,}/g, 'AIza[REDACTED]'],
  // JSON Web Tokens.
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, '[REDACTED_JWT]'],
  // key = value / "key": "value" for names that hold secrets.
  [/((?:api[_-]?key|access[_-]?token|secret|password|passwd|private[_-]?key|client[_-]?secret)\\?["']?\s*[:=]\s*\\?["']?)[^\s"'\\,;}]{4,}/gi, '$1[REDACTED]'],
  // Email addresses.
  [/[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, '[EMAIL]'],
];

/** `text` with API keys, bearer tokens, sk-… keys, other well-known secrets and email addresses masked. */
export function redact(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
