import { Type, type Static } from '@sinclair/typebox';
import { EnvironmentSchema, PermissionSchema } from './auth.js';
import { SingleLine } from './common.js';

export const CreateApiKeyBodySchema = Type.Object({
  name: SingleLine({ minLength: 1, maxLength: 100 }),
  scopes: Type.Optional(Type.Array(PermissionSchema, { uniqueItems: true, maxItems: 3, description: 'Defaults to every permission of your plan.' })),
  environment: Type.Optional(EnvironmentSchema),
  expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339; must be in the future.' })),
});
export type CreateApiKeyBody = Static<typeof CreateApiKeyBodySchema>;

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
  },
  { $id: 'ApiKey' },
);
export type ApiKey = Static<typeof ApiKeySchema>;

export const CreatedApiKeySchema = Type.Intersect([
  ApiKeySchema,
  Type.Object({ key: Type.String({ description: 'The secret; shown this once.' }) }),
]);
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;
