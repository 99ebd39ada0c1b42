/**
 * @deprecated Credential events live in identity/credential-events.ts. This
 * re-export is kept only for modules/stream, whose split is in flight on
 * another branch; delete it once those files import from identity/.
 */
export { NO_CREDENTIAL_EVENTS, type CredentialEvents, type CredentialRevoked } from '../../identity/credential-events.js';
