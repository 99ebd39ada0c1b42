import { describe, expect, it } from 'vitest';
import type { RunsTable } from '../../storage/database.js';
import { fromRow, newStep, toRow, toRun } from './run-record.js';

/** A run as stored before run ceilings: steps without cost_usd, a spec without limits, no waiting column. */
const oldRow = {
  id: 'run_old', user_id: 'usr_1', environment: 'live', workflow_id: 'wfl_1', agent_id: null, project_id: null, status: 'succeeded',
  task: 'todo API', requirements: '{}', spec: JSON.stringify({ agents: [{ type: 'coder', model: 'sandbox' }], maxIterations: 0 }),
  steps: JSON.stringify([{ index: 0, agent: 'coder', model: 'sandbox', status: 'succeeded', output: 'x', tokens_used: 12, started_at: null, finished_at: null, iteration: 0, error: null }]),
  result: null, tokens_used: 12, error: null, created_at: '2026-01-01T00:00:00.000Z', started_at: null, finished_at: null, api_key_id: null,
} as unknown as RunsTable;

describe('run records', () => {
  it('a run stored before ceilings reads with cost 0, no limits and no wait', () => {
    const run = toRun(fromRow(oldRow));
    expect(run).toMatchObject({ cost_usd: 0, limits: null, waiting: null, tokens_used: 12 });
    expect(run.steps[0]!.cost_usd).toBe(0);
  });

  it('keeps limits (in the spec), waiting and step costs through a save; the run cost is the steps\' sum, exactly', () => {
    const state = fromRow(oldRow);
    state.spec.limits = { max_cost_usd: 0.5, max_tokens: null };
    state.steps = [{ ...newStep(0, 'coder', 'sandbox', 0), cost_usd: 0.000001 }, { ...newStep(1, 'tester', 'sandbox', 0), cost_usd: 0.000002 }];
    state.waiting = { code: 'rate_limited', message: 'wait', until: '2026-01-01T00:01:00.000Z' };
    const again = toRun(fromRow(toRow(state)));
    expect(again).toMatchObject({ limits: { max_cost_usd: 0.5, max_tokens: null }, waiting: state.waiting, cost_usd: 0.000003 });
  });
});
