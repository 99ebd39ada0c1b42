import { describe, expect, it } from 'vitest';
import { chooseTarget, DeploymentHealth, type RouteTarget } from './router.js';

const target = (id: string, weight: number): RouteTarget & { id: string } => ({ id, weight, health: new DeploymentHealth(id) });

describe('chooseTarget', () => {
  it('weighted: shares in proportion to the weights', () => {
    const targets = [target('a', 1), target('b', 3)];
    const counts = { a: 0, b: 0 };
    for (let i = 0; i < 1000; i++) counts[chooseTarget(targets, 'weighted', 0, undefined, i / 1000)!.id as 'a' | 'b']++;
    expect(counts).toEqual({ a: 250, b: 750 });
  });

  it('skips disabled, cooling-down, zero-weight and skipped targets; none left → undefined', () => {
    const [a, b, c, d] = [target('a', 1), target('b', 1), target('c', 1), target('d', 0)];
    a.health.enabled = false;
    b.health.failed({ cooldownFailures: 1, cooldownMs: 1000 }, 0);
    for (let i = 0; i < 10; i++) expect(chooseTarget([a, b, c, d], 'weighted', 500, undefined, i / 10)).toBe(c);
    expect(chooseTarget([a, b, c, d], 'weighted', 500, [c], 0.5)).toBeUndefined();
    expect(chooseTarget([a, b, c, d], 'least-busy', 500, [c], 0.5)).toBeUndefined();
    // the cooldown over: b is tried again
    expect(chooseTarget([a, b, d], 'weighted', 1000, undefined, 0.99)).toBe(b);
  });

  it('cooldown after N failures in a row; a success resets; a failure after the cooldown starts another', () => {
    const h = new DeploymentHealth('x');
    const options = { cooldownFailures: 3, cooldownMs: 30_000 };
    h.failed(options, 0); h.failed(options, 0);
    expect(h.status(0)).toBe('ok');
    h.succeeded(10);
    h.failed(options, 0); h.failed(options, 0);
    expect(h.status(0)).toBe('ok');
    h.failed(options, 0);
    expect(h.view(1).status).toBe('cooling_down');
    expect(h.view(1).cooldown_until).toBe(new Date(30_000).toISOString());
    expect(h.status(30_000)).toBe('ok');
    h.failed(options, 30_000);
    expect(h.status(30_001)).toBe('cooling_down');
    h.succeeded(20);
    expect(h.view(30_001)).toEqual({ status: 'ok', consecutive_failures: 0, cooldown_until: null, latency_ms: 12 });
  });

  it('least-busy takes the one with fewest calls in flight; latency the fastest, untried first', () => {
    const [a, b] = [target('a', 1), target('b', 1)];
    a.health.inFlight = 3; b.health.inFlight = 1;
    expect(chooseTarget([a, b], 'least-busy', 0, undefined, 0.5)).toBe(b);
    a.health.succeeded(50);
    expect(chooseTarget([a, b], 'latency', 0, undefined, 0.5)).toBe(b); // b untried
    b.health.succeeded(80);
    expect(chooseTarget([a, b], 'latency', 0, undefined, 0.5)).toBe(a);
  });
});
