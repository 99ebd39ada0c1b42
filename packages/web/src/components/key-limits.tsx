import type { ApiKey, CreateApiKeyBody, Profile } from '@codeloom/client';

type Limits = ApiKey['limits'];
type LimitFields = Pick<CreateApiKeyBody, 'requests_per_minute' | 'tokens_per_minute' | 'monthly_tokens'>;

const FIELDS: { name: keyof Limits; label: string; plan?: (p: Profile) => number | null }[] = [
  { name: 'requests_per_minute', label: 'Requests per minute', plan: (p) => p.rate_limits.requests_per_minute },
  { name: 'tokens_per_minute', label: 'Tokens per minute', plan: (p) => p.rate_limits.tokens_per_minute },
  { name: 'monthly_tokens', label: 'Tokens per month' },
];

/** The optional per-key limits of the create form (empty: the plan's alone); a sandbox key has only requests per minute (sandbox calls spend no tokens). */
export function KeyLimitInputs({ profile, sandbox }: { profile: Profile | undefined; sandbox: boolean }) {
  return (
    <fieldset>
      <legend>Limits (optional)</legend>
      <p class="muted">Caps of this key's own, within your plan's; leave empty for the plan's alone.{sandbox ? ' Sandbox calls spend no tokens, so only requests per minute apply.' : ''}</p>
      {FIELDS.filter((f) => !sandbox || f.name === 'requests_per_minute').map((f) => {
        const plan = profile && f.plan ? f.plan(profile) : null;
        return (
          <label key={f.name}>{f.label}
            <input name={f.name} type="number" inputMode="numeric" min={1} step={1} {...(plan ? { max: plan, placeholder: `plan: ${plan.toLocaleString('en')}` } : { placeholder: 'no limit' })} />
          </label>
        );
      })}
    </fieldset>
  );
}

/** The limits filled in on the form, as the API's fields. */
export function limitsFrom(form: FormData): LimitFields {
  const out: LimitFields = {};
  for (const f of FIELDS) {
    const raw = String(form.get(f.name) ?? '').trim();
    if (raw) out[f.name] = Number(raw);
  }
  return out;
}

/** "30 requests/min · 5,000 tokens/min · 100,000 tokens/month", or "Plan limits". */
export function formatLimits(l: Limits | undefined): string {
  if (!l) return 'Plan limits';
  const n = (x: number) => x.toLocaleString('en');
  const parts = [
    l.requests_per_minute !== null ? `${n(l.requests_per_minute)} requests/min` : '',
    l.tokens_per_minute !== null ? `${n(l.tokens_per_minute)} tokens/min` : '',
    l.monthly_tokens !== null ? `${n(l.monthly_tokens)} tokens/month` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : 'Plan limits';
}
