import { ErrorText } from '../components/ui.js';
import { useLoad, useSession } from '../hooks.js';
import { api, lastRateUse } from '../session.js';
import { ChangePasswordSection } from './password.js';

const n = (v: number | null) => (v === null ? 'unlimited' : v.toLocaleString('en'));

/** Profile, organization, plan, and the rate-limit window as the latest answer reported it. */
export function AccountPage() {
  const { environment } = useSession();
  const profile = useLoad(() => api().user.profile(), [environment]);
  const rate = profile.data ? lastRateUse() : null; // read after the profile call, whose answer carried the headers
  const p = profile.data;
  return (
    <>
      <h1 tabIndex={-1}>Account</h1>
      <ErrorText message={profile.error} />
      {p && (
        <>
          <section aria-labelledby="profile-h">
            <h2 id="profile-h">Profile</h2>
            <dl class="facts stacked">
              <div><dt>Name</dt><dd>{p.name}</dd></div>
              <div><dt>Email</dt><dd>{p.email}</dd></div>
              <div><dt>User id</dt><dd><code>{p.id}</code></dd></div>
            </dl>
          </section>
          <ChangePasswordSection />
          <section aria-labelledby="org-h">
            <h2 id="org-h">Organization and plan</h2>
            <dl class="facts stacked">
              <div><dt>Organization</dt><dd>{p.organization.name}</dd></div>
              <div><dt>Plan</dt><dd>{p.organization.plan}</dd></div>
              <div><dt>Permissions</dt><dd>{p.permissions.join(', ')}</dd></div>
            </dl>
            <p class="muted">Plans are changed by an administrator (<code>codeloom admin set-plan</code>).</p>
          </section>
          <section aria-labelledby="limits-h">
            <h2 id="limits-h">Rate limits ({environment})</h2>
            <div class="table-wrap" tabIndex={0} role="group" aria-label="Rate limits">
              <table>
                <thead><tr><th scope="col">Limit</th><th scope="col" class="num">Allowed</th></tr></thead>
                <tbody>
                  <tr><th scope="row">Requests per minute</th><td class="num">{n(p.rate_limits.requests_per_minute)}</td></tr>
                  <tr><th scope="row">Requests per hour</th><td class="num">{n(p.rate_limits.requests_per_hour)}</td></tr>
                  <tr><th scope="row">Tokens per minute</th><td class="num">{n(p.rate_limits.tokens_per_minute)}</td></tr>
                </tbody>
              </table>
            </div>
            {rate && (
              <>
                <h3>Current use</h3>
                <p>
                  <meter min={0} max={rate.limit} value={rate.limit - rate.remaining} aria-label="Requests used in the current window">{rate.limit - rate.remaining}</meter>{' '}
                  {rate.limit - rate.remaining} of {rate.limit} requests used in the current window; it resets at {new Date(rate.reset * 1000).toLocaleTimeString('en-GB')}.
                </p>
              </>
            )}
          </section>
        </>
      )}
    </>
  );
}
