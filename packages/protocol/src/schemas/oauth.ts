import { Type, type Static } from '@sinclair/typebox';
import { PermissionSchema } from './auth.js';
import { SingleLine, StringEnum, Timestamp } from './common.js';

export const OAUTH_CLIENT_TYPES = ['confidential', 'public'] as const;
export type OAuthClientType = (typeof OAUTH_CLIENT_TYPES)[number];

const RedirectUri = Type.String({
  minLength: 1, maxLength: 2000,
  description: 'An absolute https:// URL, or http:// on a loopback host (127.0.0.1, [::1], localhost). No fragment. Matched exactly at /oauth/authorize.',
});

export const CreateOAuthClientBodySchema = Type.Object({
  name: SingleLine({ minLength: 1, maxLength: 100, description: 'Shown to people on the consent page.' }),
  redirect_uris: Type.Array(RedirectUri, { minItems: 1, maxItems: 10, uniqueItems: true }),
  scopes: Type.Optional(Type.Array(PermissionSchema, { uniqueItems: true, maxItems: 3, description: 'The most this client may ask for; defaults to every permission of your plan.' })),
  type: Type.Optional(StringEnum(OAUTH_CLIENT_TYPES, {
    default: 'confidential',
    description: 'confidential: a server-side app that keeps a client_secret. public: a browser or native app with no secret; it must use PKCE (S256).',
  })),
});
export type CreateOAuthClientBody = Static<typeof CreateOAuthClientBodySchema>;

export const UpdateOAuthClientBodySchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    redirect_uris: Type.Optional(Type.Array(RedirectUri, { minItems: 1, maxItems: 10, uniqueItems: true, description: 'Replaces the list; codes already issued keep the URI they were issued for.' })),
  },
  { minProperties: 1, additionalProperties: false },
);
export type UpdateOAuthClientBody = Static<typeof UpdateOAuthClientBodySchema>;

export const OAuthClientSchema = Type.Object(
  {
    id: Type.String({ description: 'The client id (cli_…); same as client_id.' }),
    client_id: Type.String(),
    name: Type.String(),
    type: StringEnum(OAUTH_CLIENT_TYPES),
    redirect_uris: Type.Array(Type.String()),
    scopes: Type.Array(PermissionSchema),
    created_at: Timestamp(),
  },
  { $id: 'OAuthClient' },
);
export type OAuthClient = Static<typeof OAuthClientSchema>;

export const CreatedOAuthClientSchema = Type.Intersect([
  OAuthClientSchema,
  Type.Object({ client_secret: Type.Optional(Type.String({ description: 'Confidential clients only: the secret, shown this once.' })) }),
]);
export type CreatedOAuthClient = Static<typeof CreatedOAuthClientSchema>;

/** Form fields of POST /oauth/token (RFC 6749 §4.1.3, §6); sent as application/x-www-form-urlencoded or JSON. */
export const OAuthTokenRequestSchema = Type.Object({
  grant_type: Type.String({ description: 'authorization_code or refresh_token' }),
  code: Type.Optional(Type.String()),
  redirect_uri: Type.Optional(Type.String()),
  code_verifier: Type.Optional(Type.String({ description: 'PKCE (RFC 7636): the secret whose S256 hash was sent as code_challenge.' })),
  refresh_token: Type.Optional(Type.String()),
  scope: Type.Optional(Type.String({ description: 'refresh_token grant: narrow the new access token to these scopes.' })),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String({ description: 'Or send client_id:client_secret as HTTP Basic.' })),
});
export type OAuthTokenRequest = Static<typeof OAuthTokenRequestSchema>;

export const OAuthTokenResponseSchema = Type.Object({
  access_token: Type.String({ description: 'Opaque bearer token (clo_at_…).' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.String({ description: 'Opaque (clo_rt_…); good once, rotated on every use.' }),
  scope: Type.String(),
});
export type OAuthTokenResponse = Static<typeof OAuthTokenResponseSchema>;

/** RFC 6749 §5.2 error body: the one exception to problem documents. */
export const OAuthErrorSchema = Type.Object(
  { error: Type.String(), error_description: Type.Optional(Type.String()) },
  { description: 'RFC 6749 §5.2 error (application/json)' },
);
export type OAuthErrorBody = Static<typeof OAuthErrorSchema>;

export const OAuthTokenActionSchema = Type.Object({
  token: Type.String(),
  token_type_hint: Type.Optional(Type.String({ description: 'access_token or refresh_token' })),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
});
export type OAuthTokenAction = Static<typeof OAuthTokenActionSchema>;

export const IntrospectionResponseSchema = Type.Object({
  active: Type.Boolean(),
  scope: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
  token_type: Type.Optional(Type.String({ description: 'Bearer (access token) or refresh_token' })),
  exp: Type.Optional(Type.Integer()),
  iat: Type.Optional(Type.Integer()),
  sub: Type.Optional(Type.String()),
  iss: Type.Optional(Type.String()),
});
export type IntrospectionResponse = Static<typeof IntrospectionResponseSchema>;

export const AuthorizationServerMetadataSchema = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    introspection_endpoint: Type.String(),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
    introspection_endpoint_auth_methods_supported: Type.Array(Type.String()),
    authorization_response_iss_parameter_supported: Type.Boolean(),
    service_documentation: Type.String(),
  },
  { description: 'RFC 8414 authorization server metadata' },
);
export type AuthorizationServerMetadata = Static<typeof AuthorizationServerMetadataSchema>;
