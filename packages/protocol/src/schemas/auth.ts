import { Type, type Static } from '@sinclair/typebox';
import { ENVIRONMENTS, PERMISSIONS, PLAN_NAMES } from '../plans.js';
import { SingleLine, StringEnum } from './common.js';

// Surrounding white space is allowed here and trimmed by the server.
const Email = Type.String({ pattern: '^\\s*[^\\s@\\u0000-\\u001F\\u007F]+@[^\\s@\\u0000-\\u001F\\u007F]+\\.[^\\s@\\u0000-\\u001F\\u007F]+\\s*$', minLength: 3, maxLength: 254, errorMessage: 'must be an email address', description: 'An email address; trimmed, NFKC-normalised and compared case-insensitively (docs/api.md).' });
const Password = Type.String({ minLength: 8, maxLength: 256 });

export const RegisterBodySchema = Type.Object({
  email: Email,
  password: Password,
  name: SingleLine({ minLength: 1, maxLength: 100 }),
});
export type RegisterBody = Static<typeof RegisterBodySchema>;

export const LoginBodySchema = Type.Object({
  email: SingleLine({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 256 }),
});
export type LoginBody = Static<typeof LoginBodySchema>;

export const RefreshBodySchema = Type.Object({
  refreshToken: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  refresh_token: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
});
export type RefreshBody = Static<typeof RefreshBodySchema>;

/** POST /api/v1/auth/password: a signed-in person changes their password (their other sessions end). */
export const ChangePasswordBodySchema = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 256 }),
  new_password: Type.String({ minLength: 8, maxLength: 256, description: '8–256 characters, as at registration.' }),
});
export type ChangePasswordBody = Static<typeof ChangePasswordBodySchema>;

/** POST /api/v1/auth/password-reset: ask for a reset link by email (202 whether or not the address has an account). */
export const PasswordResetBodySchema = Type.Object({ email: Email });
export type PasswordResetBody = Static<typeof PasswordResetBodySchema>;

export const PasswordResetAcceptedSchema = Type.Object({
  accepted: Type.Literal(true),
  detail: Type.String({ description: 'The same words for every address, known or not.' }),
});
export type PasswordResetAccepted = Static<typeof PasswordResetAcceptedSchema>;

/** POST /api/v1/auth/password-reset/confirm: the emailed token (good once, short-lived) and the new password. */
export const PasswordResetConfirmBodySchema = Type.Object({
  token: SingleLine({ minLength: 1, maxLength: 200 }),
  new_password: Type.String({ minLength: 8, maxLength: 256, description: '8–256 characters, as at registration.' }),
});
export type PasswordResetConfirmBody = Static<typeof PasswordResetConfirmBodySchema>;

export const PermissionSchema = StringEnum(PERMISSIONS);
export const PlanSchema = StringEnum(PLAN_NAMES);
export const EnvironmentSchema = StringEnum(ENVIRONMENTS);

export const AuthUserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  plan: PlanSchema,
});

export const AuthResponseSchema = Type.Object(
  {
    token: Type.String({ description: 'Access token (JWT); same as access_token.' }),
    access_token: Type.String(),
    refreshToken: Type.String({ description: 'Opaque refresh token, good once; same as refresh_token.' }),
    refresh_token: Type.String(),
    expiresIn: Type.Integer({ description: 'Access token lifetime in seconds; same as expires_in.' }),
    expires_in: Type.Integer(),
    token_type: Type.Literal('Bearer'),
    user: AuthUserSchema,
  },
  { $id: 'AuthResponse' },
);
export type AuthResponse = Static<typeof AuthResponseSchema>;

export const VerifyResponseSchema = Type.Object({
  valid: Type.Literal(true),
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() }),
  organization: Type.Object({ id: Type.String(), name: Type.String() }),
  subscription: Type.Object({ plan: PlanSchema }),
  credential: Type.Object({
    type: StringEnum(['session', 'api_key', 'oauth'] as const),
    scopes: Type.Array(PermissionSchema),
    environment: EnvironmentSchema,
  }),
});
export type VerifyResponse = Static<typeof VerifyResponseSchema>;

export const RateLimitsSchema = Type.Object({
  requests_per_minute: Type.Union([Type.Integer(), Type.Null()], { description: 'null means unlimited' }),
  requests_per_hour: Type.Integer(),
  tokens_per_minute: Type.Integer(),
});

export const ProfileSchema = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    organization: Type.Object({ id: Type.String(), name: Type.String(), plan: PlanSchema }),
    permissions: Type.Array(PermissionSchema),
    rate_limits: RateLimitsSchema,
    environment: EnvironmentSchema,
  },
  { $id: 'Profile' },
);
export type Profile = Static<typeof ProfileSchema>;
