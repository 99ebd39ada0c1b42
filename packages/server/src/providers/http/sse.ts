/**
 * Minimal, pull-based Server-Sent Events framing for upstream model streams
 * (WHATWG "event stream" rules: blank line ends an event, `data:` lines join
 * with \n, `:` lines are comments, CR/CRLF/LF all end lines). Pull-based so
 * the idle watchdog only runs while we actually wait on the socket.
 */
/** What the reader tells the call's idle watchdog (UpstreamCall implements it). */
export interface IdleWatch {
  wait(): void;
  idle(): void;
}

export interface SseEvent {
  event: string;
  data: string;
}

/** Reads events off a fetch body; `call` is told when we block on the socket and when we stop. */
export class SseReader {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  private done = false;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly call: IdleWatch,
  ) {}

  /** Next complete event, or null at end of body (a trailing partial event is dropped, as the SSE spec says). */
  async next(): Promise<SseEvent | null> {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const event = parseBlock(block);
        if (event) return event;
        continue;
      }
      if (this.done) return null;
      this.call.wait();
      const { value, done } = await this.reader.read();
      this.call.idle();
      if (done) {
        this.done = true;
        this.append(this.decoder.decode());
      } else {
        this.append(this.decoder.decode(value, { stream: true }));
      }
    }
  }

  private append(text: string): void {
    this.buffer += text;
    // Normalise CRLF/CR line ends, but keep a trailing CR: its LF may be in the next chunk.
    if (this.buffer.includes('\r')) {
      const keep = this.buffer.endsWith('\r') && !this.done;
      const body = keep ? this.buffer.slice(0, -1) : this.buffer;
      this.buffer = body.replace(/\r\n?/g, '\n') + (keep ? '\r' : '');
    }
  }
}

function parseBlock(block: string): SseEvent | undefined {
  // The common case (OpenAI-compatible servers): one `data: …` line and nothing else.
  if (block.startsWith('data: ') && !block.includes('\n')) return { event: 'message', data: block.slice(6) };
  let event = 'message';
  let data: string | undefined;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
  }
  return data === undefined ? undefined : { event, data };
}
