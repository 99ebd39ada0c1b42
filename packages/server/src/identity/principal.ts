import type { Environment, Permission, PlanName } from '@codeloom/protocol';

/** Who is calling, resolved once per request from the bearer credential. */
export interface Principal {
  type: 'session' | 'api_key' | 'oauth';
  user: { id: string; email: string; name: string };
  org: { id: string; name: string; plan: PlanName };
  /** Effective permissions: the credential's, narrowed to what the plan grants today. */
  scopes: Permission[];
  environment: Environment;
  sessionId?: string;
  apiKeyId?: string;
  /** When the credential stops being valid (ms since the epoch); absent when it does not expire. */
  expiresAt?: number;
  /** The API key's own limits, when it has any (enforced with the plan's: key-limits.ts, token-spend.ts). */
  keyLimits?: { requests_per_minute: number | null; tokens_per_minute: number | null; monthly_tokens: number | null };
}
