/**
 * The choice among the deployments of one model (CONTRACT §12.4, docs/decisions/0007-deployment-routing.md):
 * weighted random among the healthy ones by default, or the least busy, or the fastest. A deployment that
 * failed `cooldownFailures` times in a row (the upstream's fault) is skipped until its cooldown ends, then
 * tried again. Health lives on each instance (every instance learns from its own calls). The choice is a
 * plain loop over a few targets, without allocation: it must cost well under 5 µs (npm run bench routing).
 */

export type RoutingStrategy = 'weighted' | 'least-busy' | 'latency';
export type HealthStatus = 'ok' | 'cooling_down' | 'disabled';

export interface HealthOptions {
  cooldownFailures: number;
  cooldownMs: number;
}

/** One deployment's health on this instance. */
export class DeploymentHealth {
  consecutiveFailures = 0;
  /** Epoch ms until which the deployment is skipped; 0 when it is not cooling down. */
  cooldownUntil = 0;
  /** Exponentially weighted latency of its successful calls (to the end of the answer), ms; undefined until one succeeded. */
  latencyMs: number | undefined;
  /** Calls in flight on this instance (least-busy). */
  inFlight = 0;

  constructor(readonly id: string, public enabled = true) {}

  status(now = Date.now()): HealthStatus {
    if (!this.enabled) return 'disabled';
    return this.cooldownUntil > now ? 'cooling_down' : 'ok';
  }

  succeeded(latencyMs: number): void {
    this.consecutiveFailures = 0;
    this.cooldownUntil = 0;
    this.latencyMs = this.latencyMs === undefined ? latencyMs : this.latencyMs * 0.8 + latencyMs * 0.2;
  }

  /** A failure that is the upstream's fault; the threshold reached (or a failure after a cooldown) starts a cooldown. */
  failed(options: HealthOptions, now = Date.now()): void {
    this.consecutiveFailures++;
    if (this.consecutiveFailures >= options.cooldownFailures) this.cooldownUntil = now + options.cooldownMs;
  }

  view(now = Date.now()): { status: HealthStatus; consecutive_failures: number; cooldown_until: string | null; latency_ms: number | null } {
    return {
      status: this.status(now), consecutive_failures: this.consecutiveFailures,
      cooldown_until: this.cooldownUntil > now ? new Date(this.cooldownUntil).toISOString() : null,
      latency_ms: this.latencyMs === undefined ? null : Math.round(this.latencyMs),
    };
  }
}

/** What the router needs of a target. */
export interface RouteTarget {
  weight: number;
  health: DeploymentHealth;
}

/**
 * Picks a target among those enabled, not cooling down and not in `skip` (tried already, or at their quota);
 * undefined when none is left. `random` is in [0, 1).
 */
export function chooseTarget<T extends RouteTarget>(targets: readonly T[], strategy: RoutingStrategy, now: number, skip: readonly T[] | undefined, random: number): T | undefined {
  if (strategy === 'weighted') {
    let total = 0;
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      if (eligible(t, now, skip)) total += t.weight;
    }
    if (total <= 0) return undefined;
    let point = random * total;
    let last: T | undefined;
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      if (!eligible(t, now, skip)) continue;
      last = t;
      point -= t.weight;
      if (point < 0) return t;
    }
    return last;
  }
  let best: T | undefined;
  let bestScore = Infinity;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    if (!eligible(t, now, skip)) continue;
    // least-busy: calls in flight per unit of weight; latency: the recent latency, an untried target first.
    const score = strategy === 'least-busy' ? (t.health.inFlight + random) / t.weight : (t.health.latencyMs ?? -1 / t.weight);
    if (score < bestScore) { bestScore = score; best = t; }
  }
  return best;
}

function eligible(t: RouteTarget, now: number, skip: readonly RouteTarget[] | undefined): boolean {
  return t.weight > 0 && t.health.enabled && t.health.cooldownUntil <= now && (skip === undefined || !skip.includes(t));
}
