import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import type { Principal } from '../../identity/principal.js';
import type { ResponsesTable } from '../../storage/database.js';
import type { Store } from '../../storage/store.js';
import { fromResponsesBody } from './responses-request.js';
import { MAX_STORED_CONVERSATION_BYTES, RESPONSE_RETENTION_MS, ResponsesService, type ChatCaller } from './responses-service.js';

const principal = { user: { id: 'usr_1' }, org: { id: 'org_1' }, environment: 'production' } as unknown as Principal;

/** The service over an in-memory responses table and a caller that answers "ok" (and records what it was asked). */
function setup(rows: ResponsesTable[] = []) {
  const asked: unknown[] = [];
  const store = {
    responses: {
      get: async (scope: { orgId: string }, id: string) => rows.find((r) => r.id === id && r.org_id === scope.orgId),
      insert: async (row: ResponsesTable) => { rows.push(row); },
    },
  } as unknown as Store;
  const calls: ChatCaller = {
    call: async (_p, spec) => {
      asked.push(spec);
      return { text: 'ok', usage: { promptTokens: 3, completionTokens: 1 }, finishReason: 'stop', tokens: 4, costMicros: 0, model: { id: 'sandbox' }, upstreamMs: 0, committed: true } as never;
    },
  };
  return { service: new ResponsesService(store, calls, { default: 'sandbox' }), rows, asked };
}

const row = (id: string, conversation: unknown[]): ResponsesTable => ({
  id, org_id: 'org_1', user_id: 'usr_1', environment: 'production', response: '{}', conversation: JSON.stringify(conversation), created_at: '', expires_at: '',
});

describe('ResponsesService', () => {
  it('keeps the conversation it ends (previous + input + answer, without instructions) for 30 days', async () => {
    const { service, rows, asked } = setup([row('resp_prev', [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }])]);
    const r = await service.create(principal, fromResponsesBody({ input: 'three', instructions: 'Be brief.', previous_response_id: 'resp_prev' }), { signal: new AbortController().signal });
    expect(asked).toMatchObject([{ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: 'three' }] }]);
    const kept = rows.find((x) => x.id === r.id)!;
    expect(JSON.parse(kept.conversation)).toEqual([{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: 'three' }, { role: 'assistant', content: 'ok' }]);
    expect(JSON.parse(kept.response)).toEqual(r);
    expect(Date.parse(kept.expires_at) - Date.parse(kept.created_at)).toBe(RESPONSE_RETENTION_MS);
    expect(kept).toMatchObject({ org_id: 'org_1', user_id: 'usr_1', environment: 'production' });
  });

  it('a conversation over the stored bound with store is a 400 naming store, before any model call; with store: false it is answered and not kept', async () => {
    const big = [{ role: 'user', content: 'x'.repeat(MAX_STORED_CONVERSATION_BYTES) }];
    const { service, rows, asked } = setup([row('resp_big', big)]);
    const refused = await service.create(principal, fromResponsesBody({ input: 'more', previous_response_id: 'resp_big' }), { signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).extra.errors?.[0]?.path).toBe('/store');
    expect(asked).toHaveLength(0);
    const answered = await service.create(principal, fromResponsesBody({ input: 'more', previous_response_id: 'resp_big', store: false }), { signal: new AbortController().signal });
    expect(answered.store).toBe(false);
    expect(asked).toHaveLength(1);
    expect(rows.map((x) => x.id)).toEqual(['resp_big']);
  });
});
