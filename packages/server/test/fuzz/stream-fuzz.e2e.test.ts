import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@codeloom/protocol';
import { nextIp, startTestServer, TEST_DATABASE_URL, type TestServer } from '../helpers/test-server.js';
import { registerUser, request } from '../helpers/http.js';
import { bye, connect, type WsClient } from '../helpers/ws-client.js';
import { deepNesting, hostileJson, hostileString } from './hostile-values.js';

/**
 * Property-based frames on the streaming channel: valid, boundary and hostile
 * (wrong types, NUL, lone surrogates, deep nesting, binary, other accounts'
 * run ids). Every answer is a JSON frame, every error carries a registry code
 * with its status and never internal_error, nothing names the other account's
 * resources, and the connection stays open. FUZZ_SEED replays.
 */
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const FRAMES = Number(process.env.FUZZ_FRAMES ?? 1_500);
const BATCH = 50;

function frameArb(runIds: string[]): fc.Arbitrary<string | Buffer> {
  const id = fc.oneof(fc.constantFrom('r1', 'r2', 'x'.repeat(128), 'x'.repeat(129)), hostileString);
  const generate = fc.record({
    type: fc.constant('generate'),
    id,
    prompt: fc.oneof(fc.string({ minLength: 1, maxLength: 60 }), hostileJson),
    language: fc.oneof(fc.constantFrom('typescript', 'python', 'bash', 'nope'), hostileJson),
    model: fc.oneof(fc.constantFrom('sandbox', 'no-such-model'), hostileJson),
    streamTokens: fc.oneof(fc.boolean(), hostileJson),
    context: fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }), hostileJson),
    project_id: fc.oneof(fc.constantFrom(...runIds), hostileString),
  }, { requiredKeys: ['type'] });
  const other = fc.oneof(
    fc.record({ type: fc.constant('ping') }),
    fc.record({ type: fc.constant('cancel'), id }),
    fc.record({ type: fc.constant('subscribe'), run_id: fc.oneof(fc.constantFrom(...runIds), hostileJson) }),
    fc.record({ type: fc.constant('auth'), token: fc.oneof(hostileString, fc.constant('x')) }),
    fc.record({ type: fc.oneof(hostileJson, fc.constantFrom('PING', 'generate ', 'unknown')) }),
    fc.dictionary(hostileString, hostileJson, { maxKeys: 4 }),
    deepNesting,
    hostileJson,
  );
  const text = fc.oneof({ weight: 3, arbitrary: generate }, { weight: 4, arbitrary: other }).map((v) => JSON.stringify(v) ?? 'null');
  const raw = fc.oneof(
    fc.constantFrom('{', '', 'null', '[]', '"\\ud800"', '{"type":"ping"', '\u0000', 'x'.repeat(300 * 1024)),
    fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
  );
  return fc.oneof({ weight: 8, arbitrary: text }, { weight: 1, arbitrary: raw });
}

function problemWithFrame(raw: string, secretsOfB: string[]): string | undefined {
  let frame: any;
  try { frame = JSON.parse(raw); } catch { return `a frame that is not JSON: ${raw.slice(0, 200)}`; }
  if (typeof frame?.event !== 'string') return `a frame without event: ${raw.slice(0, 200)}`;
  const leaked = secretsOfB.find((s) => raw.includes(s) && frame.event !== 'error');
  if (leaked) return `names another account's resource ${leaked}: ${raw.slice(0, 300)}`;
  if (frame.event !== 'error') return undefined;
  const entry = (ERROR_CODES as Record<string, { status: number }>)[frame.data?.code];
  if (!entry) return `an error frame with unknown code: ${raw.slice(0, 300)}`;
  if (entry.status !== frame.data.status) return `an error frame whose status is not its code's: ${raw.slice(0, 300)}`;
  if (frame.data.status >= 500 && frame.data.code !== 'upstream_error') return `an error frame ${frame.data.code}: ${raw.slice(0, 300)}`;
  return undefined;
}

function streamFuzz(dialect: 'sqlite' | 'postgres') {
  let t: TestServer;
  let a: { token: string };
  let runIds: string[];
  let secretsOfB: string[];
  beforeAll(async () => {
    t = await startTestServer({ dialect, env: { CODELOOM_WS_FRAMES_PER_SECOND: '100000', CODELOOM_WS_FRAME_BURST: '100000' } });
    const users = [await registerUser(t.url, { ip: nextIp() }), await registerUser(t.url, { ip: nextIp() })];
    for (const u of users) await t.server.ctx.store.accounts.setPlanByEmail(u.email.toLowerCase(), 'enterprise');
    const [alice, bob] = users as [typeof users[0], typeof users[0]];
    a = alice;
    const own = async (token: string) => {
      const agent = (await request(`${t.url}/api/v1/agents`, { token, body: { name: 'a', model: 'sandbox' } })).body;
      const project = (await request(`${t.url}/api/v1/projects`, { token, body: { name: 'p' } })).body;
      const run = (await request(`${t.url}/api/v1/agents/${agent.id}/execute`, { token, body: { task: 'hello world' } })).body;
      return [run.id as string, project.id as string];
    };
    const mine = await own(alice.token);
    const theirs = await own(bob.token);
    runIds = [...mine, ...theirs, 'run_doesnotexist'];
    secretsOfB = [...theirs, bob.user.id, bob.email];
  });
  afterAll(async () => { await t?.close(); });

  it(`${FRAMES} generated frames get well-formed answers and the connection stays open`, async () => {
    const c: WsClient = await connect(t.url, a.token);
    let sent = 0;
    try {
      await fc.assert(fc.asyncProperty(fc.array(frameArb(runIds), { minLength: BATCH, maxLength: BATCH }), async (frames) => {
        const from = c.frames.length;
        for (const f of frames) c.ws.send(f);
        sent += frames.length;
        await c.ping(); // frames are handled in order: the pong comes after every answer to this batch's frames… except generations, still running
        for (const f of c.frames.slice(from)) {
          const problem = problemWithFrame(JSON.stringify(f), secretsOfB);
          if (problem) throw new Error(problem);
        }
        if (c.ws.readyState !== c.ws.OPEN) throw new Error('the connection was closed');
      }), {
        seed: SEED, numRuns: Math.ceil(FRAMES / BATCH), endOnFailure: true,
        reporter: (out) => { if (out.failed) throw new Error(`stream fuzz failed (replay: FUZZ_SEED=${out.seed}): ${(out.errorInstance as Error | undefined)?.message}`); },
      });
    } finally {
      process.stdout.write(`fuzz (stream, ${dialect}): ${sent} frames, seed ${SEED}\n`);
    }
    await new Promise((r) => setTimeout(r, 200));
    for (const f of c.frames) {
      const problem = problemWithFrame(JSON.stringify(f), secretsOfB);
      expect(problem).toBeUndefined();
    }
    await c.ping();
    await bye(c);
    expect((await request(`${t.url}/healthz`)).status).toBe(200);
  }, 300_000);
}

describe('stream fuzz (SQLite)', () => streamFuzz('sqlite'));
describe.skipIf(!TEST_DATABASE_URL)('stream fuzz (PostgreSQL)', () => streamFuzz('postgres'));
