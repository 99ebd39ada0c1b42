import type { FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { Principal } from '../../identity/principal.js';
import type { AccountsRepo } from '../../storage/repos/accounts-repo.js';

/**
 * Instance administrators (CONTRACT §12.4): users.is_admin (the first account of an empty database, `codeloom
 * admin grant EMAIL`) or an email in CODELOOM_ADMIN_EMAILS. Read on every admin request, so a revocation
 * applies at once on every instance.
 */
export class Admins {
  private readonly emails: Set<string>;

  constructor(private readonly accounts: Pick<AccountsRepo, 'isAdmin'>, adminEmails: readonly string[] = []) {
    this.emails = new Set(adminEmails.map((e) => e.trim().toLowerCase()));
  }

  async isAdmin(user: { id: string; email: string }): Promise<boolean> {
    return this.emails.has(user.email.trim().toLowerCase()) || this.accounts.isAdmin(user.id);
  }

  /**
   * An admin route's check: an administrator's session token, or an API key with scope `admin` whose owner
   * is still an administrator; anyone else 403 (no credential: 401, by the auth hook).
   */
  async require(principal: Principal | null | undefined): Promise<void> {
    if (!principal) throw new AppError('unauthorized');
    if (principal.type === 'oauth') throw new AppError('forbidden', 'Admin routes take an administrator\'s session token or an API key with scope admin; OAuth tokens cannot use them.');
    if (principal.type === 'api_key' && !principal.scopes.includes('admin')) throw new AppError('insufficient_scope', 'This route needs an API key with scope admin (only an administrator can create one).');
    if (!(await this.isAdmin(principal.user))) throw new AppError('forbidden', 'Only instance administrators may use admin routes (the first account, CODELOOM_ADMIN_EMAILS, or `codeloom admin grant EMAIL`).');
  }

  /** A Fastify hook (preValidation) doing `require` for the request's principal. */
  readonly preHandler = async (request: FastifyRequest): Promise<void> => this.require(request.principal);
}
