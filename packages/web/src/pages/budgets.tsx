import type { ApiKey, Profile } from '@codeloom/client';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Confirm, ErrorText, Select } from '../components/ui.js';
import { clockTime, countdown, useNow } from '../components/waiting.js';
import { useLoad } from '../hooks.js';
import { api, messageOf, rawApi, SessionError } from '../session.js';

type ScopeType = 'organization' | 'member' | 'api_key';
type Period = 'day' | 'month' | 'total';
interface Budget {
  id: string;
  scope: { type: ScopeType; id: string };
  amount_usd: number;
  period: Period;
  spent_usd: number;
  alert_thresholds: number[];
  resets_at: string | null;
}
interface KeyChoice { key: ApiKey; environment: 'production' | 'sandbox' }
/** Field messages of a problem document, by field name (`/amount_usd` → `amount_usd`, `/scope/id` → `scope`). */
type FieldErrors = Record<string, string>;

const PERIODS: [Period, string][] = [['day', 'Per day (UTC)'], ['month', 'Per month (UTC)'], ['total', 'In total (never resets)']];
const PERIOD_WORDS: Record<Period, string> = { day: 'per day', month: 'per month', total: 'in total' };

/** US dollars: at least cents, up to the micro-dollar the server keeps ($3.20, $0.012345). */
export const dollars = (n: number) => `$${n.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
const percent = (f: number) => `${Math.round(f * 1000) / 10}%`;

/** "50, 80, 100" (percent) → [0.5, 0.8, 1]; empty → undefined (the server's default); null when not numbers. */
export function parseThresholds(text: string): number[] | undefined | null {
  const parts = text.split(/[\s,;]+/).map((p) => p.replace(/%$/, '')).filter(Boolean);
  if (!parts.length) return text.trim() ? null : undefined;
  const values = parts.map(Number);
  if (values.some((v) => !Number.isFinite(v))) return null;
  return values.map((v) => Math.round(v * 1000) / 100_000);
}

function fieldErrors(error: unknown): FieldErrors {
  const out: FieldErrors = {};
  if (error instanceof SessionError) {
    for (const e of error.errors) {
      // Schema errors name `/amount_usd`; the service's own name `body/scope/id`.
      const field = e.path.replace(/^\//, '').replace(/^body\//, '').split('/')[0] || 'form';
      out[field] ??= e.message;
    }
  }
  return out;
}

/** A labelled input with the server's message for it (aria-invalid, described by the message). */
function Field({ name, label, error, children }: { name: string; label: string; error?: string | undefined; children: (a: Record<string, unknown>) => ComponentChildren }) {
  const id = `budget-${name}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children({ id, name, 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': error ? `${id}-error` : undefined })}
      {error && <p class="error" id={`${id}-error`}>{error}</p>}
    </div>
  );
}

/** Spent of the amount as a bar, marked at the alert thresholds, coloured once one is crossed (red at the amount). */
function SpendBar({ budget, name }: { budget: Budget; name: string }) {
  const ratio = budget.amount_usd > 0 ? budget.spent_usd / budget.amount_usd : 0;
  const crossed = budget.alert_thresholds.filter((t) => ratio >= t);
  const level = ratio >= 1 ? 'over' : crossed.length ? 'warn' : 'ok';
  const text = `${dollars(budget.spent_usd)} of ${dollars(budget.amount_usd)} spent (${percent(ratio)})`;
  return (
    <>
      <div class="spend">
        <span data-testid="budget-spent">{text}</span>
        {level !== 'ok' && <span class={level === 'over' ? 'error' : 'muted'}>{level === 'over' ? 'Budget reached: calls it covers are refused' : `Past the ${percent(Math.max(...crossed))} alert`}</span>}
      </div>
      <div class="bar-track" role="progressbar" aria-label={`Spent of the ${name} budget`} aria-valuemin={0} aria-valuemax={100}
        aria-valuenow={Math.min(100, Math.round(ratio * 100))} aria-valuetext={text}>
        <div class="bar-fill" data-level={level} style={{ width: `${Math.min(100, ratio * 100)}%` }} />
        {budget.alert_thresholds.filter((t) => t < 1).map((t) => <div key={t} class="bar-mark" style={{ left: `${t * 100}%` }} />)}
      </div>
    </>
  );
}

function scopeName(scope: Budget['scope'], profile: Profile | undefined, keys: KeyChoice[] | undefined): string {
  if (scope.type === 'organization') return `Organization: ${profile && scope.id === profile.organization.id ? profile.organization.name : scope.id}`;
  if (scope.type === 'member') return `Member: ${profile && scope.id === profile.id ? `${profile.name} (${profile.email})` : scope.id}`;
  const k = keys?.find((c) => c.key.id === scope.id)?.key;
  return `API key: ${k ? `${k.name} (${k.prefix}…)` : `${scope.id} (revoked or unknown)`}`;
}

function BudgetCard({ budget, name, onChanged, onDelete }: { budget: Budget; name: string; onChanged: () => void; onDelete: () => void }) {
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState('');
  const resets = budget.resets_at ? Date.parse(budget.resets_at) : null;
  const now = useNow(resets !== null);
  const save = async (event: Event) => {
    event.preventDefault();
    const raw = String(new FormData(event.currentTarget as HTMLFormElement).get('amount') ?? '').trim();
    setErrors({}); setError(null); setSaved('');
    try {
      await rawApi<Budget>('PATCH', `/budgets/${budget.id}`, { amount_usd: raw === '' ? null : Number(raw) });
      setSaved('Saved');
      onChanged();
    } catch (e) {
      const f = fieldErrors(e);
      setErrors(f);
      setError(f.amount_usd ? null : messageOf(e));
    }
  };
  const amountId = `amount-${budget.id}`;
  return (
    <li class="card" aria-labelledby={`h-${budget.id}`} data-testid="budget">
      <div class="budget-head">
        <h3 id={`h-${budget.id}`}>{name}</h3>
        <span class="muted">{dollars(budget.amount_usd)} {PERIOD_WORDS[budget.period]}</span>
      </div>
      <SpendBar budget={budget} name={name} />
      <p class="muted">
        {resets !== null ? <>Resets at <time dateTime={budget.resets_at!}>{clockTime(resets, now)}</time> (in {countdown(resets - now)})</> : 'Never resets (a total budget).'}
        {' · '}{budget.alert_thresholds.length ? `Alerts at ${budget.alert_thresholds.map(percent).join(', ')}` : 'No alerts'}
      </p>
      <form class="budget-edit" onSubmit={save} noValidate aria-label={`Edit the ${name} budget`}>
        <div class="field">
          <label for={amountId}>Amount (USD)</label>
          <input id={amountId} name="amount" type="number" inputMode="decimal" step="any" defaultValue={String(budget.amount_usd)}
            aria-invalid={errors.amount_usd ? 'true' : undefined} aria-describedby={errors.amount_usd ? `${amountId}-error` : undefined} />
        </div>
        <button type="submit" class="secondary">Save amount</button>
        <button type="button" class="danger" onClick={onDelete}>Delete budget</button>
        <span role="status" class="muted">{saved}</span>
      </form>
      {errors.amount_usd && <p class="error" id={`${amountId}-error`}>Amount {errors.amount_usd}</p>}
      <ErrorText message={error} />
    </li>
  );
}

/**
 * Dollar budgets of the organization (owners and admins; today the organization is the signed-in
 * account's own): each with what its period has spent as a bar, when it resets, an inline amount,
 * delete with a confirmation; a create form whose field messages come from the server's problem document.
 */
export function BudgetsPage() {
  const budgets = useLoad(async () => (await rawApi<{ data: Budget[] }>('GET', '/budgets')).data, []);
  const profile = useLoad(() => api().user.profile(), []);
  // Keys of both environments (a budget belongs to the organization, not to an environment).
  const keys = useLoad(async () => {
    const all = await Promise.all((['production', 'sandbox'] as const).map(async (environment) =>
      (await api(environment).apiKeys.page(1, { limit: 100 })).data.map((key): KeyChoice => ({ key, environment }))));
    return all.flat();
  }, []);
  const [scopeType, setScopeType] = useState<ScopeType>('organization');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState('');
  const [deleting, setDeleting] = useState<Budget | null>(null);
  const p = profile.data;

  const create = async (event: Event) => {
    event.preventDefault();
    const formEl = event.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    const text = (k: string) => String(form.get(k) ?? '').trim();
    setErrors({}); setError(null); setCreated('');
    const thresholds = parseThresholds(text('alert_thresholds'));
    if (thresholds === null) { setErrors({ alert_thresholds: 'must be percentages separated by commas, e.g. 50, 80, 100' }); return; }
    const id = scopeType === 'organization' ? p?.organization.id : scopeType === 'member' ? p?.id : text('api_key');
    if (!id) { setErrors({ scope: scopeType === 'api_key' ? 'choose an API key' : 'your profile has not loaded yet' }); return; }
    setBusy(true);
    try {
      const amount = text('amount_usd');
      const budget = await rawApi<Budget>('POST', '/budgets', {
        scope: { type: scopeType, id }, amount_usd: amount === '' ? null : Number(amount), period: text('period'),
        ...(thresholds ? { alert_thresholds: thresholds } : {}),
      });
      setCreated(`Created the ${dollars(budget.amount_usd)} ${PERIOD_WORDS[budget.period]} budget.`);
      formEl.reset();
      setScopeType('organization');
      budgets.reload();
    } catch (e) {
      const f = fieldErrors(e);
      setErrors(f);
      if (!Object.keys(f).length || f.form) setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    const b = deleting;
    setDeleting(null);
    if (!b) return;
    try {
      await rawApi<void>('DELETE', `/budgets/${b.id}`);
      budgets.reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const productionKeys = keys.data?.filter((k) => k.environment === 'production') ?? [];
  const sandboxKeys = keys.data?.filter((k) => k.environment === 'sandbox') ?? [];
  return (
    <>
      <h1 tabIndex={-1}>Budgets</h1>
      <p class="muted">
        Limits in US dollars on what model calls cost, at this server's prices (see Usage). A call that would go past
        a budget is refused (429 <code>budget_exceeded</code>) until its period resets; a total budget never resets.
        Sandbox calls cost nothing and count against none.
      </p>
      <section aria-labelledby="new-budget">
        <h2 id="new-budget">New budget</h2>
        <form onSubmit={create} class="stack narrow" noValidate>
          <Select id="scope_type" label="Applies to" value={scopeType} onChange={(v) => setScopeType(v as ScopeType)}>
            <option value="organization">The organization{p ? ` (${p.organization.name})` : ''}</option>
            <option value="member">One member: you{p ? ` (${p.email})` : ''}</option>
            <option value="api_key">One API key</option>
          </Select>
          {scopeType === 'api_key' && (
            <Field name="api_key" label="API key" error={errors.scope}>
              {(a) => (
                <select {...a} required>
                  <option value="">Choose a key…</option>
                  {productionKeys.length > 0 && <optgroup label="Production">{productionKeys.map((k) => <option key={k.key.id} value={k.key.id}>{k.key.name} ({k.key.prefix}…)</option>)}</optgroup>}
                  {sandboxKeys.length > 0 && <optgroup label="Sandbox">{sandboxKeys.map((k) => <option key={k.key.id} value={k.key.id}>{k.key.name} ({k.key.prefix}…)</option>)}</optgroup>}
                </select>
              )}
            </Field>
          )}
          {scopeType !== 'api_key' && errors.scope && <p class="error">{errors.scope}</p>}
          <ErrorText message={keys.error} />
          <Field name="amount_usd" label="Amount (USD)" error={errors.amount_usd}>
            {(a) => <input {...a} type="number" inputMode="decimal" step="any" placeholder="25.00" />}
          </Field>
          <Field name="period" label="Period" error={errors.period}>
            {(a) => <select {...a}>{PERIODS.map(([v, l]) => <option key={v} value={v} selected={v === 'month'}>{l}</option>)}</select>}
          </Field>
          <Field name="alert_thresholds" label="Alerts at (% of the amount, optional)" error={errors.alert_thresholds}>
            {(a) => <input {...a} inputMode="decimal" placeholder="50, 80, 100" />}
          </Field>
          <ErrorText message={error} />
          <div class="row">
            <button type="submit" disabled={busy}>Create budget</button>
            <span role="status" class="muted">{created}</span>
          </div>
        </form>
      </section>
      <section aria-labelledby="budget-list">
        <h2 id="budget-list">Budgets</h2>
        <ErrorText message={budgets.error ?? profile.error} />
        {!budgets.data && !budgets.error && <p role="status">Loading…</p>}
        {budgets.data && budgets.data.length === 0 && <p class="muted">No budgets yet: spending is limited only by the token windows of your plan and keys.</p>}
        {budgets.data && budgets.data.length > 0 && (
          <ul class="budgets" aria-label="Budgets">
            {budgets.data.map((b) => {
              const name = scopeName(b.scope, p, keys.data);
              return <BudgetCard key={b.id} budget={b} name={name} onChanged={budgets.reload} onDelete={() => setDeleting(b)} />;
            })}
          </ul>
        )}
      </section>
      <Confirm open={deleting !== null} title="Delete this budget?" confirmLabel="Delete budget" onConfirm={() => void remove()} onCancel={() => setDeleting(null)}>
        <p>{deleting ? `${scopeName(deleting.scope, p, keys.data)}, ${dollars(deleting.amount_usd)} ${PERIOD_WORDS[deleting.period]}` : ''}: calls it covers are no longer limited by it. This cannot be undone.</p>
      </Confirm>
    </>
  );
}
