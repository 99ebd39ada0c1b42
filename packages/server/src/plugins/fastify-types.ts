import type { Permission } from '@codeloom/protocol';
import type { Principal } from '../identity/principal.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'none': public; 'any': any valid credential; a permission: that scope is required. Default 'none'. */
    auth?: 'none' | 'any' | Permission;
    /** Only a session token (not an API key or OAuth token) may call this route. */
    sessionOnly?: boolean;
    /** The credential may also come as `x-api-key` (Anthropic's header; the /anthropic routes). Authorization wins when both are sent. */
    apiKeyHeader?: boolean;
    /** false: infrastructure probes; headers are reported but nothing is counted. */
    rateLimit?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}
