import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { StreamEvent } from '@codeloom/protocol';

/**
 * Frames from the server to one client. `sendNow` writes at once (control
 * and error frames); `send` is for a generation's stream and applies
 * backpressure: a slow reader slows the upstream instead of growing memory.
 */
export class FrameSender {
  private drainWait: Promise<void> | undefined;

  constructor(private readonly ws: WebSocket) {}

  sendNow(frame: StreamEvent): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  /**
   * Sends and, when the client is not keeping up, waits for the socket to drain before the next token is
   * pulled. A cancel or shutdown (`signal`) ends the wait, so the request still ends with its error frame.
   */
  async send(frame: StreamEvent, signal: AbortSignal): Promise<void> {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(JSON.stringify(frame));
    const socket = (this.ws as unknown as { _socket?: Socket })._socket;
    if (socket?.writableNeedDrain && !socket.destroyed && !signal.aborted) await untilAborted(signal, this.drained(socket));
  }

  /**
   * One wait shared by every generation of the connection, with its listeners removed when it ends: a
   * once()-per-token race would leave a 'close' listener behind on every wait and put one 'drain'
   * listener per running generation on the socket (MaxListenersExceededWarning past 10, memory growth).
   */
  private drained(socket: Socket): Promise<void> {
    this.drainWait ??= new Promise<void>((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        this.drainWait = undefined;
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
    return this.drainWait;
  }
}

/** Resolves when `wait` settles or `signal` aborts, whichever is first; leaves no listener behind. */
function untilAborted(signal: AbortSignal, wait: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { signal.removeEventListener('abort', done); resolve(); };
    signal.addEventListener('abort', done);
    void wait.then(done, done);
  });
}
