/**
 * The bounded reader of the driver's report: lines split anywhere across chunks are read whole; an endless line,
 * too many bytes, invalid UTF-8, non-JSON or an event of an unknown shape end the report as malformed with a
 * reason, nothing is buffered past the bounds, and no input throws.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reportReader, type DriverEvent } from './sandbox-report.js';

const reader = (over: Partial<{ maxLine: number; maxTotal: number }> = {}) => {
  const events: DriverEvent[] = [];
  const r = reportReader({ checks: 2, maxLine: 1024, maxTotal: 64 * 1024, maxText: 512, onEvent: (e) => events.push(e), ...over });
  return { r, events };
};

describe('the sandbox report reader', () => {
  it('reads events whole, however the bytes are split', () => {
    const text = ['{"t":"start","check":0}', '{"t":"out","check":0,"text":"héllo\\n"}', '{"t":"end","check":0,"exit_code":0,"duration_ms":5,"output":"héllo"}', '{"t":"skip","check":1}', '{"t":"done"}'].join('\n') + '\n';
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const { r, events } = reader();
      for (let i = 0; i < bytes.length; i += size) expect(r.push(bytes.subarray(i, i + size))).toBe(true);
      expect(r.malformed).toBeUndefined();
      expect(events).toEqual([
        { t: 'start', check: 0 }, { t: 'out', check: 0, text: 'héllo\n' },
        { t: 'end', check: 0, exit_code: 0, duration_ms: 5, output: 'héllo' }, { t: 'skip', check: 1 }, { t: 'done' },
      ]);
    }
  });

  it('refuses an endless line without buffering it', () => {
    const { r } = reader();
    let accepted = true;
    for (let i = 0; i < 100 && accepted; i++) accepted = r.push(Buffer.alloc(100, 0x61));
    expect(accepted).toBe(false);
    expect(r.malformed).toMatch(/line over 1024 bytes/);
    expect(r.push(Buffer.from('{"t":"done"}\n'))).toBe(false);
  });

  it('refuses more bytes than the bound in all', () => {
    const { r } = reader({ maxTotal: 100 });
    expect(r.push(Buffer.from('{"t":"done"}\n'.repeat(7)))).toBe(true);
    expect(r.push(Buffer.from('{"t":"done"}\n'.repeat(2)))).toBe(false);
    expect(r.malformed).toMatch(/passed 100 bytes/);
  });

  it('refuses non-JSON, invalid UTF-8 and events of unknown shapes (a check out of range, a forged field)', () => {
    const bad = [
      'not json', '\xff\xfe{"t":"done"}', '{"t":"end","check":0,"exit_code":"0","duration_ms":1,"output":""}', '{"t":"start","check":2}',
      '{"t":"start","check":-1}', '{"t":"out","check":0,"text":' + JSON.stringify('x'.repeat(600)) + '}', '{"t":"pwn"}', '[1,2]', 'null',
      '{"t":"end","check":0,"exit_code":0,"duration_ms":1.5,"output":""}', '{"t":"end","check":0,"exit_code":0,"duration_ms":1,"output":"","killed":7}',
    ];
    for (const line of bad) {
      const { r, events } = reader();
      expect(r.push(Buffer.from(`${line}\n`, line.startsWith('\xff') ? 'latin1' : 'utf8')), line).toBe(false);
      expect(r.malformed, line).toBeTruthy();
      expect(events, line).toEqual([]);
    }
  });

  it('never throws, whatever the bytes', () => {
    fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }), (chunks) => {
      const { r } = reader({ maxLine: 256, maxTotal: 2048 });
      for (const c of chunks) r.push(Buffer.from(c));
    }), { numRuns: 500 });
  });
});
