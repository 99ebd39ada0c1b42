/**
 * The abort of one upstream call. Node's AbortController is an EventTarget: making one, listening to it
 * and aborting it (every call is aborted when it is disposed, to free an unread socket) cost about 30 µs
 * per call in the gateway benchmark. nodeHttpFetch takes this handle as its `signal` (it only reads
 * `aborted` and adds one 'abort' listener); a real AbortSignal is made only when asked for (a custom fetch).
 */
export class CallAbort {
  aborted = false;
  reason: unknown;
  private listeners: Array<() => void> = [];
  private controller: AbortController | undefined;

  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners = this.listeners.filter((l) => l !== listener);
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    for (const l of listeners) l();
    this.controller?.abort(reason);
  }

  /** A standard AbortSignal that follows this handle (for fetch implementations that need one). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}
