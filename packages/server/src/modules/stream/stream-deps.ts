import type { RateLimiter } from '../../limits/rate-limiter.js';
import type { CredentialResolver } from '../../identity/credentials.js';
import type { GenerationService } from '../generate/generation-service.js';
import type { RunsService } from '../runs/runs-service.js';
import type { CredentialWatch } from './credential-watch.js';
import type { FrameLimits } from './frame-rate-limiter.js';

/** What the channel acts with: each connection and its frame handlers reach nothing else. */
export interface ChannelDeps {
  /** Resolves the credential of the upgrade or an `auth` frame, and checks it again before work starts. */
  credentials: CredentialResolver;
  /** Tells connections of a revoked credential (on every instance). */
  credentialWatch: CredentialWatch;
  /** The request limits a `generate` frame is counted against, as an HTTP request is. */
  rateLimiter: RateLimiter;
  generation: GenerationService;
  /** Run ownership and events, for `subscribe`. */
  runs: RunsService;
}

export interface ChannelSettings {
  authTimeoutMs: number;
  maxConcurrentPerConnection: number;
  frameLimits: FrameLimits;
}
