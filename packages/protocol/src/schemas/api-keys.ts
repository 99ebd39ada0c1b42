import { Type, type Static } from '@sinclair/typebox';
import { EnvironmentSchema, PermissionSchema } from './auth.js';
import { SingleLine } from './common.js';

/** Limits of the key's own, on top of the plan's (each at most the plan's figure; null or absent: the plan's alone). */
const KeyLimitFields = {
  requests_per_minute: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()], { description: "Requests a minute this key may make (at most the plan's)." })),
  tokens_per_minute: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()], { description: "Model tokens a minute this key may spend (at most the plan's)." })),
  monthly_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }), Type.Null()], { description: 'Model tokens this key may spend in a calendar month (UTC).' })),
};

export const CreateApiKeyBodySchema = Type.Object({
  name: SingleLine({ minLength: 1, maxLength: 100 }),
  scopes: Type.Optional(Type.Array(PermissionSchema, { uniqueItems: true, maxItems: 3, description: 'Defaults to every permission of your plan.' })),
  environment: Type.Optional(EnvironmentSchema),
  expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339; must be in the future.' })),
  ...KeyLimitFields,
});
export type CreateApiKeyBody = Static<typeof CreateApiKeyBodySchema>;

export const UpdateApiKeyBodySchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  ...KeyLimitFields,
}, { additionalProperties: false });
export type UpdateApiKeyBody = Static<typeof UpdateApiKeyBodySchema>;

export const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it.' }),
    scopes: Type.Array(PermissionSchema),
    environment: EnvironmentSchema,
    created_at: Type.String(),
    last_used_at: Type.Union([Type.String(), Type.Null()]),
    expires_at: Type.Union([Type.String(), Type.Null()]),
    limits: Type.Object({
      requests_per_minute: Type.Union([Type.Integer(), Type.Null()]),
      tokens_per_minute: Type.Union([Type.Integer(), Type.Null()]),
      monthly_tokens: Type.Union([Type.Integer(), Type.Null()]),
    }, { description: "The key's own limits; null: the plan's alone." }),
  },
  { $id: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Intersect([
  ApiKeySchema,
  Type.Object({ key: Type.String({ description: 'The secret; shown this once.' }) }),
]);
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;
