/** Plans, the permissions they grant, and their rate limits (CONTRACT §4, §6). */
/** `admin` (CONTRACT §12.4) is granted by no plan: only an instance administrator can give it to an API key, for the admin routes. */
export const PERMISSIONS = ['read:code', 'write:code', 'deploy:apps', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];
/** The scopes an OAuth application may ask for: all but `admin`. */
export const OAUTH_SCOPES: readonly Permission[] = PERMISSIONS.filter((p) => p !== 'admin');

export const PLAN_NAMES = ['free', 'pro', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface PlanLimits {
  /** null = unlimited */
  requests_per_minute: number | null;
  requests_per_hour: number;
  tokens_per_minute: number;
}

export const PLANS: Readonly<Record<PlanName, { permissions: readonly Permission[]; limits: PlanLimits }>> = {
  free: {
    permissions: ['read:code', 'write:code'],
    limits: { requests_per_minute: 100, requests_per_hour: 1_000, tokens_per_minute: 20_000 },
  },
  pro: {
    permissions: ['read:code', 'write:code'],
    limits: { requests_per_minute: 1_000, requests_per_hour: 10_000, tokens_per_minute: 200_000 },
  },
  enterprise: {
    permissions: ['read:code', 'write:code', 'deploy:apps'],
    limits: { requests_per_minute: null, requests_per_hour: 100_000, tokens_per_minute: 2_000_000 },
  },
};

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

export const ENVIRONMENTS = ['production', 'sandbox'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];
