import type { AuthResponse, Environment, LoginBody, RegisterBody } from '@codeloom/protocol';
import { AppError } from '../../errors.js';
import type { Store } from '../../storage/store.js';
import type { Account, AccountWithSecret } from '../../storage/repos/accounts-repo.js';
import { UniqueViolation, retryAfterHeader, secondsUntil } from '../../errors.js';
import type { LimitStore, WindowSpec } from '../../limits/limit-store.js';
import type { RevocationStore } from '../../limits/revocation-store.js';
import type { KeyRing } from './key-ring.js';
import type { PasswordHasher } from './password-hasher.js';
import type { Principal } from '../../identity/principal.js';
import { mintRefreshToken, sha256 } from '../../identity/secrets.js';
import { sessionScope } from '../../identity/scopes.js';
import { NO_CREDENTIAL_EVENTS, type CredentialEvents } from '../../identity/credential-events.js';
import { emailLookupKeys, normalizeEmail } from './email-normalization.js';

export interface AuthSettings {
  accessTokenTtl: number;
  refreshTokenTtl: number;
  loginMaxFailures: number;
  loginMaxFailuresPerIp: number;
  loginWindow: number;
  /** CODELOOM_SIGNUP: who may register (the first account of an empty database always may). */
  signup?: string;
  /** CODELOOM_SIGNUP_DOMAINS, for `domains`. */
  signupDomains?: readonly string[];
}


export class AuthService {
  private events: CredentialEvents = NO_CREDENTIAL_EVENTS;

  constructor(
    private readonly store: Store,
    private readonly keys: KeyRing,
    private readonly hasher: PasswordHasher,
    private readonly limits: LimitStore,
    private readonly revocations: RevocationStore,
    private readonly settings: AuthSettings,
  ) {}

  /** Who hears of logouts and revoked sessions (the streaming channel closes their sockets). */
  attachCredentialEvents(events: CredentialEvents): void {
    this.events = events;
  }

  /** An account by email, under the current normalisation or the one older accounts were stored under. */
  private async findByEmail(email: string) {
    for (const key of emailLookupKeys(email)) {
      const account = await this.store.accounts.findByEmail(key);
      if (account) return account;
    }
    return undefined;
  }

  async register(body: RegisterBody, environment: Environment): Promise<AuthResponse> {
    const email = body.email.trim();
    const name = body.name.trim();
    if (!name) throw new AppError('validation_failed', 'name must not be blank.', { errors: [{ path: '/name', message: 'must not be blank' }] });
    const normalized = normalizeEmail(email);
    await this.checkSignup(normalized);
    // Cheap pre-check spares an argon2 hash for the common duplicate; the unique index decides races.
    if (await this.findByEmail(email)) throw emailTaken();
    const passwordHash = await this.hasher.hash(body.password);
    let account: Account;
    try {
      account = await this.store.accounts.create({ email, emailNormalized: normalized, name, passwordHash, plan: 'free' });
    } catch (error) {
      if (error instanceof UniqueViolation) throw emailTaken();
      throw error;
    }
    return this.startSession(account, environment);
  }

  /**
   * CODELOOM_SIGNUP (CONTRACT §12.5): throws 403 signup_closed, naming the
   * mode, unless sign-up is open to this address. The first account of an
   * empty database is always allowed, so a closed instance can be set up.
   */
  private async checkSignup(normalizedEmail: string): Promise<void> {
    const mode = this.settings.signup ?? 'open';
    if (mode === 'open') return;
    if (mode === 'domains' && signupDomainAllowed(normalizedEmail, this.settings.signupDomains ?? [])) return;
    if (await this.noAccountYet()) return;
    throw new AppError('signup_closed', mode === 'domains'
      ? 'Sign-up on this server is limited to email addresses at allowed domains (CODELOOM_SIGNUP=domains), and this address is not at one of them. Ask an administrator for an account.'
      : mode === 'invite'
        ? 'Sign-up on this server is by invitation only (CODELOOM_SIGNUP=invite). Ask an administrator for an invitation.'
        : 'Sign-up is closed on this server (CODELOOM_SIGNUP=closed). Ask an administrator for an account.');
  }

  /** The sign-up mode, and whether the database has no account yet (then the first sign-up is allowed whatever the mode). */
  async signupPolicy(): Promise<{ mode: string; firstAccount: boolean }> {
    return { mode: this.settings.signup ?? 'open', firstAccount: await this.noAccountYet() };
  }

  private async noAccountYet(): Promise<boolean> {
    return (await this.store.accounts.list(1, 1)).total === 0;
  }

  async login(body: LoginBody, clientIp: string, environment: Environment): Promise<AuthResponse> {
    return this.startSession(await this.authenticate(body.email, body.password, clientIp), environment);
  }

  /**
   * Checks an email and password under the login throttle (per account and
   * per client address); shared by the JSON login and the OAuth sign-in page.
   * A failure slot is taken in both windows, atomically, BEFORE the password
   * is checked, so concurrent attempts can never check more passwords than
   * the limits allow; a correct password gives its slot back (only failures
   * count). Throws rate_limited or invalid_credentials.
   */
  async authenticate(email: string, password: string, clientIp: string): Promise<Account> {
    const normalized = normalizeEmail(email);
    const windows: WindowSpec[] = [
      { key: `login:acct:${sha256(normalized)}`, limit: this.settings.loginMaxFailures, windowSec: this.settings.loginWindow },
      { key: `login:ip:${clientIp}`, limit: this.settings.loginMaxFailuresPerIp, windowSec: this.settings.loginWindow },
    ];
    const slot = await this.limits.consume(windows, 1);
    if (!slot.allowed) {
      const blocked = slot.states.filter((s) => s.remaining === 0).sort((a, b) => b.resetAt - a.resetAt)[0] ?? slot.states[0]!;
      const retryAfter = secondsUntil(blocked.resetAt);
      throw new AppError('rate_limited', `Too many failed sign-ins; try again in ${retryAfter} seconds.`, { headers: retryAfterHeader(retryAfter) });
    }
    let account: AccountWithSecret | undefined;
    try {
      account = await this.findByEmail(email);
      const ok = account ? await this.hasher.verify(account.passwordHash, password) : (await this.hasher.burn(password), false);
      if (!ok) account = undefined;
    } catch (error) {
      // Nothing was checked (storage failed): the slot goes back.
      await this.limits.adjust(windows, -1, slot.atMs).catch(() => {});
      throw error;
    }
    if (!account) throw new AppError('invalid_credentials');
    await this.limits.adjust(windows, -1, slot.atMs);
    return account;
  }

  async refresh(refreshToken: string): Promise<AuthResponse> {
    const next = mintRefreshToken();
    const result = await this.store.sessions.rotate(sha256(refreshToken), next.hash, this.refreshExpiry());
    if (result.status === 'reused') {
      await this.revocations.revoke(result.sessionId, this.settings.accessTokenTtl);
      this.events.revoked({ userId: result.userId, reason: 'session_revoked' });
      throw new AppError('invalid_token', 'This refresh token was already used; the session has been revoked for safety. Sign in again.');
    }
    if (result.status === 'invalid') throw new AppError('invalid_token', 'The refresh token is unknown, expired or revoked.');
    const account = await this.store.accounts.findById(result.userId);
    if (!account) throw new AppError('invalid_token', 'The account of this session no longer exists.');
    return this.authResponse(account, result.sessionId, next.token, result.environment);
  }

  async logout(principal: Principal): Promise<void> {
    if (!principal.sessionId) throw new AppError('forbidden', 'Only a session token can be logged out; revoke API keys with DELETE /api/v1/api-keys/{id}.');
    await this.store.sessions.revoke(principal.sessionId, 'logout');
    await this.revocations.revoke(principal.sessionId, this.settings.accessTokenTtl);
    this.events.revoked({ userId: principal.user.id, reason: 'logout' });
  }

  private refreshExpiry() {
    return new Date(Date.now() + this.settings.refreshTokenTtl * 1000).toISOString();
  }

  private async startSession(account: Account, environment: Environment): Promise<AuthResponse> {
    const refresh = mintRefreshToken();
    const session = await this.store.sessions.create({ userId: account.user.id, environment, refreshHash: refresh.hash, refreshExpiresAt: this.refreshExpiry() });
    return this.authResponse(account, session.id, refresh.token, environment);
  }

  private async authResponse(account: Account, sessionId: string, refreshToken: string, environment: Environment): Promise<AuthResponse> {
    const ttl = this.settings.accessTokenTtl;
    const scope = sessionScope(account.org.plan);
    const token = await this.keys.sign({ sub: account.user.id, sid: sessionId, scope, env: environment }, ttl);
    return {
      token, access_token: token, refreshToken, refresh_token: refreshToken,
      expiresIn: ttl, expires_in: ttl, token_type: 'Bearer',
      user: { id: account.user.id, email: account.user.email, name: account.user.name, plan: account.org.plan },
    };
  }
}

/** Whether an address's domain is one of CODELOOM_SIGNUP_DOMAINS (exactly; case and IDN form do not matter). */
export function signupDomainAllowed(normalizedEmail: string, domains: readonly string[]): boolean {
  const domain = normalizedEmail.slice(normalizedEmail.lastIndexOf('@') + 1);
  return domain.length > 0 && domains.some((d) => normalizeEmail(`x@${d.replace(/^@/, '')}`).slice(2) === domain);
}

function emailTaken() {
  return new AppError('conflict', 'An account with this email already exists.');
}
