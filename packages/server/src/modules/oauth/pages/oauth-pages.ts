import { PLANS, type Permission } from '@codeloom/protocol';
import type { OAuthClientRecord } from '../../../storage/repos/oauth-clients-repo.js';
import type { Account } from '../../../storage/repos/accounts-repo.js';
import type { AuthorizeParams } from '../authorize-request.js';
import { escapeHtml as e, LOGO_SVG, renderPage, type RenderedPage } from './page-layout.js';

/** What each permission lets an application do, in the words a person reads on the consent page. */
export const SCOPE_WORDING: Record<Permission, { label: string; detail: string; icon: string }> = {
  'read:code': {
    label: 'See your code',
    detail: 'Read your projects and their files, and your generations, agents, workflows and runs.',
    icon: '<path d="M1.5 10S4.8 4 10 4s8.5 6 8.5 6-3.3 6-8.5 6-8.5-6-8.5-6Z"/><circle cx="10" cy="10" r="2.6"/>',
  },
  admin: {
    label: 'Administer this server',
    detail: 'Add, change and remove model deployments (never granted to applications: only an administrator’s API key carries it).',
    icon: '<path d="M10 2 3 5v5c0 4 3 7 7 8 4-1 7-4 7-8V5l-7-3Z"/>',
  },
  'write:code': {
    label: 'Generate and change code',
    detail: 'Generate code, and create, change or delete your projects, agents, workflows and runs. Generations count toward your plan’s limits.',
    icon: '<path d="m13.5 3.5 3 3L7 16H4v-3l9.5-9.5Z"/><path d="m11.5 5.5 3 3"/>',
  },
  'deploy:apps': {
    label: 'Deploy apps',
    detail: 'Deploy applications from your account.',
    icon: '<path d="M10 2.5c3 2 4.5 5 4.5 8.5L12 13.5H8L5.5 11C5.5 7.5 7 4.5 10 2.5Z"/><circle cx="10" cy="8" r="1.4"/><path d="M8 16.5h4"/>',
  },
};

const icon = (paths: string) =>
  `<svg viewBox="0 0 20 20" width="20" height="20" fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">${paths}</svg>`;
const ALERT_ICON = icon('<circle cx="10" cy="10" r="8"/><path d="M10 6v4.5M10 13.5v.01"/>');

const hidden = (name: string, value: string | undefined) => (value === undefined ? '' : `<input type="hidden" name="${name}" value="${e(value)}">`);
const authorizeFields = (params: AuthorizeParams) => Object.entries(params).map(([k, v]) => hidden(k, v)).join('');
const alert = (id: string, message: string) => `<div class="alert" role="alert" id="${id}">${ALERT_ICON}<span>${e(message)}</span></div>`;
const hostOf = (uri: string) => { try { return new URL(uri).host; } catch { return uri; } };

export function renderSignInPage(input: { client: OAuthClientRecord; params: AuthorizeParams; csrf: string; email?: string; error?: string }): RenderedPage {
  const { client, params, csrf, email, error } = input;
  const invalid = error ? ' aria-invalid="true" aria-describedby="sign-in-error"' : '';
  // Focus goes where typing starts: the email field, or the password when the email is already filled in.
  const focusEmail = email ? '' : ' autofocus';
  const focusPassword = email ? ' autofocus' : '';
  return renderPage(`Sign in to continue to ${client.name}`, `
<div class="card">
<h1>Sign in</h1>
<p class="lead">to continue to <strong>${e(client.name)}</strong></p>
${error ? alert('sign-in-error', error) : ''}
<form method="post" action="/oauth/sign-in" novalidate>
${hidden('csrf_token', csrf)}${authorizeFields(params)}
<div class="field"><label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${e(email ?? '')}"${invalid}${focusEmail}></div>
<div class="field"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${invalid}${focusPassword}></div>
<button class="primary" type="submit">Sign in</button>
</form>
</div>`);
}

export function renderConsentPage(input: { client: OAuthClientRecord; params: AuthorizeParams; scopes: Permission[]; account: Account; csrf: string; notice?: string }): RenderedPage {
  const { client, params, scopes, account, csrf, notice } = input;
  const granted = PLANS[account.org.plan].permissions;
  const allowed = scopes.filter((s) => granted.includes(s));
  const missing = scopes.filter((s) => !granted.includes(s));
  const items = allowed.map((s) => `<li>${icon(SCOPE_WORDING[s].icon)}<div><strong>${e(SCOPE_WORDING[s].label)}</strong><span>${e(SCOPE_WORDING[s].detail)}</span></div></li>`).join('\n');
  return renderPage(`Allow ${client.name} to use your account?`, `
<div class="card">
<div class="apps" aria-hidden="true"><span class="app-badge">${e(initialOf(client.name))}</span><span class="dots">•••</span>${LOGO_SVG}</div>
<h1><span>${e(client.name)}</span> wants to access your Codeloom account</h1>
<p class="lead">Review what it will be able to do before you decide.</p>
${notice ? alert('consent-notice', notice) : ''}
<div class="account">
<div class="who"><span class="name">${e(account.user.name)}</span><span class="email">${e(account.user.email)}</span></div>
<form method="post" action="/oauth/sign-out">${hidden('csrf_token', csrf)}${authorizeFields(params)}<button class="link" type="submit">Not you?</button></form>
</div>
<h2 id="scopes-heading">${e(client.name)} will be able to:</h2>
<ul class="scopes" aria-labelledby="scopes-heading">
${items}
</ul>
${missing.length ? `<p class="note">Also asked for, but not part of your ${e(account.org.plan)} plan: ${missing.map((s) => e(SCOPE_WORDING[s].label.toLowerCase())).join(', ')}.</p>` : ''}
<p class="note">Allowing sends you back to <code>${e(hostOf(params.redirect_uri ?? ''))}</code>. It will act as you until the access is revoked.</p>
<form method="post" action="/oauth/authorize">${hidden('csrf_token', csrf)}${authorizeFields(params)}
<div class="actions">
<button class="secondary" type="submit" name="decision" value="deny">Deny</button>
<button class="primary" type="submit" name="decision" value="allow">Allow</button>
</div>
</form>
</div>`);
}

export function renderErrorPage(input: { title: string; message: string }): RenderedPage {
  return renderPage(input.title, `
<div class="card">
<h1>${e(input.title)}</h1>
${alert('error-detail', input.message)}
<p class="lead">Go back to the application you came from and try again. If this keeps happening, contact its developer.</p>
</div>`);
}

function initialOf(name: string): string {
  const first = [...name.trim()][0];
  return first ? first.toUpperCase() : '?';
}
