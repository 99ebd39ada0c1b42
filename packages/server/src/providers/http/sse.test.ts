import { describe, expect, it } from 'vitest';
import { SseReader, type SseEvent } from './sse.js';

const watch = { wait() {}, idle() {} };

async function readAll(pieces: string[]): Promise<SseEvent[]> {
  const bytes = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of pieces) controller.enqueue(bytes.encode(p));
      controller.close();
    },
  });
  const reader = new SseReader(body.getReader(), watch);
  const events: SseEvent[] = [];
  for (let e = await reader.next(); e; e = await reader.next()) events.push(e);
  return events;
}

describe('SseReader', () => {
  it('frames events split anywhere across chunks, with CRLF, comments and multi-line data', async () => {
    const wire = ': keep-alive\r\n\r\nevent: ping\r\ndata: {"a":1}\r\n\r\ndata: line1\ndata:line2\n\ndata: [DONE]\n\n';
    const expected = [
      { event: 'ping', data: '{"a":1}' },
      { event: 'message', data: 'line1\nline2' },
      { event: 'message', data: '[DONE]' },
    ];
    expect(await readAll([wire])).toEqual(expected);
    // every possible split point, including between CR and LF
    for (let i = 1; i < wire.length; i++) expect(await readAll([wire.slice(0, i), wire.slice(i)])).toEqual(expected);
  });

  it('drops a trailing event the body never terminated', async () => {
    expect(await readAll(['data: one\n\ndata: tru'])).toEqual([{ event: 'message', data: 'one' }]);
  });

  it('decodes multi-byte characters split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: héllo ✓\n\n');
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const b of bytes) c.enqueue(new Uint8Array([b]));
        c.close();
      },
    });
    expect(await new SseReader(body.getReader(), watch).next()).toEqual({ event: 'message', data: 'héllo ✓' });
  });
});
