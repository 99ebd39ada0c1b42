import { useState } from 'preact/hooks';
import { ErrorText } from '../components/ui.js';
import { navigate } from '../router.js';
import { changePassword, confirmPasswordReset, messageOf, requestPasswordReset } from '../session.js';

const MISMATCH = 'The new password and its confirmation differ.';

/** The new-password pair (new + confirm), with the rule shown once. */
function NewPasswordFields({ hintId }: { hintId: string }) {
  return (
    <>
      <label>New password<input name="new_password" type="password" autoComplete="new-password" required minLength={8} maxLength={256} aria-describedby={hintId} /></label>
      <label>Confirm new password<input name="confirm_password" type="password" autoComplete="new-password" required minLength={8} maxLength={256} /></label>
      <p id={hintId} class="muted">At least 8 characters.</p>
    </>
  );
}

/** Account page: change the password (the other sessions end; this one stays signed in). */
export function ChangePasswordSection() {
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const formEl = event.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    const field = (k: string) => String(form.get(k) ?? '');
    setError(null);
    setDone(false);
    if (field('new_password') !== field('confirm_password')) { setError(MISMATCH); return; }
    setBusy(true);
    try {
      await changePassword(field('current_password'), field('new_password'));
      formEl.reset();
      setDone(true);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="password-h">
      <h2 id="password-h">Password</h2>
      <form onSubmit={submit} class="stack narrow" aria-labelledby="password-h">
        <label>Current password<input name="current_password" type="password" autoComplete="current-password" required maxLength={256} /></label>
        <NewPasswordFields hintId="new-pw-hint" />
        <ErrorText message={error} />
        {done && <p role="status" class="success">Password changed. Your other sessions were signed out; this one stays signed in.</p>}
        <button type="submit" disabled={busy}>Change password</button>
      </form>
    </section>
  );
}

/** Signed out: ask for a reset link by email. */
export function ForgotPasswordPage() {
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const email = String(new FormData(event.currentTarget as HTMLFormElement).get('email') ?? '');
    setBusy(true);
    setError(null);
    try {
      setSent((await requestPasswordReset(email)).detail);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="auth">
      <h1 tabIndex={-1}>Reset your password</h1>
      {sent ? (
        <p role="status" class="success">{sent} Check your inbox.</p>
      ) : (
        <form onSubmit={submit} class="stack">
          <p class="muted">Enter the email address of your account: a link to choose a new password will be sent to it.</p>
          <label>Email<input name="email" type="email" autoComplete="email" required maxLength={254} /></label>
          <ErrorText message={error} />
          <button type="submit" disabled={busy}>Send reset link</button>
        </form>
      )}
      <p><a href="/dashboard/sign-in">Back to sign in</a></p>
    </div>
  );
}

/** The token of the emailed link (`#token=…`): kept here, and taken out of the address bar so it does not linger in history. */
let resetToken = '';
function takeTokenFromUrl(): string {
  const fromUrl = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromUrl) resetToken = fromUrl;
  if (location.hash) history.replaceState(null, '', location.pathname);
  return resetToken;
}

/** Reached from the emailed link: choose the new password. Every session of the account ends, this one included. */
export function ResetPasswordPage() {
  const [token] = useState(takeTokenFromUrl);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const field = (k: string) => String(form.get(k) ?? '');
    setError(null);
    if (field('new_password') !== field('confirm_password')) { setError(MISMATCH); return; }
    setBusy(true);
    try {
      await confirmPasswordReset(token, field('new_password'));
      // Every session ended, this page's too: sign in again with the new password.
      location.assign('/dashboard/sign-in?password=reset');
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };
  return (
    <div class="auth">
      <h1 tabIndex={-1}>Choose a new password</h1>
      {token ? (
        <form onSubmit={submit} class="stack">
          <NewPasswordFields hintId="reset-pw-hint" />
          <ErrorText message={error} />
          <button type="submit" disabled={busy}>Set new password</button>
        </form>
      ) : (
        <p class="error" role="alert">This page needs the link from the reset email. <a href="/dashboard/forgot-password" onClick={(e) => { e.preventDefault(); navigate('/forgot-password'); }}>Ask for a new link</a>.</p>
      )}
      {error && <p><a href="/dashboard/forgot-password">Ask for a new link</a></p>}
    </div>
  );
}
