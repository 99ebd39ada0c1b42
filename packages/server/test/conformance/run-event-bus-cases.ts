/**
 * What every RunEventBus (src/modules/runs/run-events.ts) must do, run
 * against the in-memory bus (one instance) and the Redis Streams bus
 * (several instances), as create-run-engine.ts picks them. From the
 * interface's contract: `append` gives each event its run's next sequence
 * number (1, 2, 3, …), keeps it and hands it to live listeners; `read`
 * replays what is kept after a sequence number (a client resuming with
 * Last-Event-ID); appends of one run from one instance keep their call
 * order; `signal` reaches the instance executing a run. Cases that need
 * several instances on one backend are skipped through the `shared`
 * capability for the in-memory bus, never left out.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StreamEvent } from '@codeloom/protocol';
import { isTerminalFrame, type RunEventBus, type RunFrame, type RunSignal } from '../../src/modules/runs/run-events.js';
import { until } from './wait.js';

export interface BusBackend {
  /** A new bus instance on this backend; a second one is a second server instance. */
  open(): Promise<RunEventBus>;
  /** Seconds the backend still keeps a run's log, when it can tell (Redis key TTLs). */
  keptFor?(runId: string): Promise<number>;
  close(): Promise<void>;
}

export interface BusSetup {
  /** Several instances on one backend see each other's events and signals (Redis); the in-memory bus serves one. */
  shared: boolean;
  /** Why the bus cannot run here (no TEST_REDIS_URL): printed, and every case skipped. */
  unavailable?: string | undefined;
  start(): Promise<BusBackend>;
}

let runs = 0;
const newRun = () => `run_conformance_${process.pid}_${Date.now().toString(36)}_${++runs}`;
const token = (runId: string, text: string): StreamEvent => ({ event: 'token', id: runId, data: text });
const started = (runId: string): StreamEvent => ({ event: 'run_started', id: runId, data: { id: runId, status: 'running' } });
const completed = (runId: string): StreamEvent => ({ event: 'complete', id: runId, data: { id: runId, status: 'succeeded' } });

/** Frames a listener heard, and a wait for a count of them. */
function recorder(bus: RunEventBus, runId: string) {
  const frames: RunFrame[] = [];
  const stop = bus.listen(runId, (frame) => frames.push(frame));
  return { frames, stop, heard: (n: number) => until(() => frames.length >= n, `${n} live frame(s) of ${runId}, heard ${frames.length}`) };
}

export function runEventBusConformance(name: string, setup: BusSetup): void {
  if (setup.unavailable) console.log(`skipped: ${name} run-event bus conformance: ${setup.unavailable}`);

  describe.skipIf(setup.unavailable !== undefined)(`${name} run-event bus conformance`, () => {
    let backend: BusBackend;
    let bus: RunEventBus;
    const cleanups: Array<() => void> = [];
    beforeAll(async () => {
      backend = await setup.start();
      bus = await backend.open();
    });
    afterEach(() => cleanups.splice(0).forEach((stop) => stop()));
    afterAll(() => backend?.close());
    const listen = (b: RunEventBus, runId: string) => {
      const r = recorder(b, runId);
      cleanups.push(r.stop);
      return r;
    };

    it('ready() resolves: the instance hears live frames and signals from then on', async () => {
      await bus.ready();
    });

    it('append numbers each run\'s events 1, 2, 3… apart from other runs, and stamps the run id', async () => {
      const [a, b] = [newRun(), newRun()];
      const frames = [await bus.append(a, started(a)), await bus.append(b, started(b)), await bus.append(a, token(a, 'x')), await bus.append(b, token(b, 'y')), await bus.append(a, token(a, 'z'))];
      expect(frames.map((f) => [f.id, f.seq])).toEqual([[a, 1], [b, 1], [a, 2], [b, 2], [a, 3]]);
      expect(frames[2]).toMatchObject({ event: 'token', id: a, seq: 2, data: 'x' });
    });

    it('a listener hears every frame live, in order, exactly as append returned it', async () => {
      const runId = newRun();
      const live = listen(bus, runId);
      const appended: RunFrame[] = [];
      for (const text of ['a', 'b', 'c', 'd']) appended.push(await bus.append(runId, token(runId, text)));
      await live.heard(4);
      expect(live.frames).toEqual(appended);
    });

    it('a frame is a snapshot: changing the event after append changes neither the log nor what listeners got', async () => {
      const runId = newRun();
      const live = listen(bus, runId);
      const event = { event: 'step_started', id: runId, data: { index: 0, agent: 'coder' } };
      await bus.append(runId, event);
      event.data.agent = 'changed';
      await live.heard(1);
      expect(live.frames[0]!.data).toEqual({ index: 0, agent: 'coder' });
      expect((await bus.read(runId, 0))[0]!.data).toEqual({ index: 0, agent: 'coder' });
    });

    it('read replays the frames after a sequence number (resume); nothing past the end or for an unknown run', async () => {
      const runId = newRun();
      const appended: RunFrame[] = [];
      for (const text of ['1', '2', '3', '4', '5']) appended.push(await bus.append(runId, token(runId, text)));
      expect(await bus.read(runId, 0)).toEqual(appended);
      expect(await bus.read(runId, 3)).toEqual(appended.slice(3));
      expect(await bus.read(runId, 5)).toEqual([]);
      expect(await bus.read(runId, 99)).toEqual([]);
      expect(await bus.read(newRun(), 0)).toEqual([]);
    });

    it('several subscribers each hear every frame; a subscriber of another run hears none', async () => {
      const [runId, other] = [newRun(), newRun()];
      const subscribers = [listen(bus, runId), listen(bus, runId), listen(bus, runId)];
      const bystander = listen(bus, other);
      for (const text of ['a', 'b', 'c']) await bus.append(runId, token(runId, text));
      for (const s of subscribers) await s.heard(3);
      for (const s of subscribers) expect(s.frames.map((f) => f.seq)).toEqual([1, 2, 3]);
      await bus.append(other, token(other, 'elsewhere'));
      await bystander.heard(1);
      expect(bystander.frames.map((f) => f.id)).toEqual([other]);
    });

    it('unsubscribing stops that listener only', async () => {
      const runId = newRun();
      const [leaving, staying] = [listen(bus, runId), listen(bus, runId)];
      await bus.append(runId, token(runId, 'before'));
      await leaving.heard(1);
      leaving.stop();
      await bus.append(runId, token(runId, 'after'));
      await staying.heard(2);
      await bus.append(runId, token(runId, 'later'));
      await staying.heard(3);
      expect(leaving.frames.map((f) => f.data)).toEqual(['before']);
    });

    it('appends of one run made at once from one instance keep their call order', async () => {
      const runId = newRun();
      const live = listen(bus, runId);
      const texts = Array.from({ length: 40 }, (_, i) => `t${i}`);
      const frames = await Promise.all(texts.map((text) => bus.append(runId, token(runId, text))));
      expect(frames.map((f) => f.seq)).toEqual(texts.map((_, i) => i + 1));
      expect(frames.map((f) => f.data)).toEqual(texts);
      await live.heard(40);
      expect(live.frames.map((f) => f.data)).toEqual(texts);
      expect((await bus.read(runId, 0)).map((f) => f.data)).toEqual(texts);
    });

    it('the end of a run: its final frame is heard and kept with the rest, and the log stays readable (a day, where the backend tells)', async () => {
      const runId = newRun();
      const live = listen(bus, runId);
      await bus.append(runId, started(runId));
      await bus.append(runId, token(runId, 'done'));
      const last = await bus.append(runId, completed(runId));
      expect(isTerminalFrame(last)).toBe(true);
      await live.heard(3);
      expect(live.frames.at(-1)).toEqual(last);
      const kept = await bus.read(runId, 0);
      expect(kept.map((f) => f.event)).toEqual(['run_started', 'token', 'complete']);
      expect(await bus.read(runId, 2)).toEqual([last]);
      if (backend.keptFor) expect(await backend.keptFor(runId)).toBeGreaterThanOrEqual(24 * 3600);
    });

    it('a signal reaches the instance\'s handlers with the run and the reason', async () => {
      const heard: Array<[string, RunSignal]> = [];
      bus.onSignal((runId, reason) => heard.push([runId, reason]));
      const runId = newRun();
      await bus.signal(runId, 'cancelled');
      await until(() => heard.some(([id]) => id === runId), 'the signal');
      expect(heard.filter(([id]) => id === runId)).toEqual([[runId, 'cancelled']]);
    });

    describe.skipIf(!setup.shared)('two instances on one backend (capability: shared)', () => {
      let other: RunEventBus;
      beforeAll(async () => {
        other = await backend.open();
      });

      it('an instance hears live the frames another appends, and reads them from the log', async () => {
        const runId = newRun();
        const live = listen(other, runId);
        const appended = [await bus.append(runId, started(runId)), await bus.append(runId, token(runId, 'hi'))];
        await live.heard(2);
        expect(live.frames).toEqual(appended);
        expect(await other.read(runId, 0)).toEqual(appended);
        expect(await other.read(runId, 1)).toEqual(appended.slice(1));
      });

      it('appends to one run from both instances share one numbering, and both hear all of them in order', async () => {
        const runId = newRun();
        const [here, there] = [listen(bus, runId), listen(other, runId)];
        const frames = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? other : bus).append(runId, token(runId, `t${i}`))));
        expect(frames.map((f) => f.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        await here.heard(20);
        await there.heard(20);
        expect(here.frames.map((f) => f.seq)).toEqual(there.frames.map((f) => f.seq));
        expect(here.frames.map((f) => f.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect(await other.read(runId, 0)).toEqual(await bus.read(runId, 0));
      });

      it('a signal sent from one instance reaches the handlers of every instance', async () => {
        const here: Array<[string, RunSignal]> = [];
        const there: Array<[string, RunSignal]> = [];
        bus.onSignal((runId, reason) => here.push([runId, reason]));
        other.onSignal((runId, reason) => there.push([runId, reason]));
        const runId = newRun();
        await other.signal(runId, 'interrupted');
        await until(() => here.some(([id]) => id === runId) && there.some(([id]) => id === runId), 'the signal on both instances');
        expect(here.filter(([id]) => id === runId)).toEqual([[runId, 'interrupted']]);
        expect(there.filter(([id]) => id === runId)).toEqual([[runId, 'interrupted']]);
      });
    });
  });
}
