/** Why a credential stopped holding; `userId` absent means "anyone's" (an OAuth client was deleted). */
export interface CredentialRevoked {
  userId?: string;
  reason: 'logout' | 'session_revoked' | 'api_key_revoked' | 'oauth_revoked';
}

/**
 * Told after a revocation is committed (database, then revocation store), so
 * whoever holds the credential open — WebSocket connections on any instance —
 * checks it again at once. Implemented by the stream module's CredentialWatch.
 */
export interface CredentialEvents {
  revoked(event: CredentialRevoked): void;
}

export const NO_CREDENTIAL_EVENTS: CredentialEvents = { revoked() {} };
