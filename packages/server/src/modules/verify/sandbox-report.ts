/**
 * The sandbox driver's report, read with bounds: JSON lines of at most `maxLine` bytes and `maxTotal` bytes
 * in all. Whatever arrives — an endless line, invalid UTF-8, non-JSON, JSON of the wrong shape — ends the
 * report as `malformed` with a reason; nothing here throws, and nothing is buffered past the bounds.
 */
export type DriverEvent =
  | { t: 'start'; check: number }
  | { t: 'out'; check: number; text: string }
  | { t: 'end'; check: number; exit_code: number | null; duration_ms: number; output: string; killed?: string }
  | { t: 'skip'; check: number }
  | { t: 'files'; error: string }
  | { t: 'file'; path: string; content: string }
  | { t: 'collected'; skipped: string[]; truncated: boolean }
  | { t: 'done' };

export interface ReportReader {
  /** Feeds a chunk of the driver's stdout; returns false once the report is malformed (stop reading). */
  push(chunk: Buffer): boolean;
  /** The reason the report was refused, if it was. */
  readonly malformed: string | undefined;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isStr = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;

/** Checks one parsed line against the event shapes; undefined when it matches none. */
export function toEvent(value: unknown, checks: number, maxText: number): DriverEvent | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const o = value as Record<string, unknown>;
  const check = o.check;
  const inRange = isInt(check) && check >= 0 && check < checks;
  switch (o.t) {
    case 'start': case 'skip':
      return inRange ? { t: o.t, check: check as number } : undefined;
    case 'out':
      return inRange && isStr(o.text, maxText) ? { t: 'out', check: check as number, text: o.text } : undefined;
    case 'end': {
      if (!inRange || !(o.exit_code === null || isInt(o.exit_code)) || !isInt(o.duration_ms) || !isStr(o.output, maxText)) return undefined;
      if (o.killed !== undefined && !isStr(o.killed, 500)) return undefined;
      return { t: 'end', check: check as number, exit_code: o.exit_code as number | null, duration_ms: o.duration_ms, output: o.output, ...(o.killed !== undefined ? { killed: o.killed as string } : {}) };
    }
    case 'files':
      return isStr(o.error, 2000) ? { t: 'files', error: o.error } : undefined;
    case 'done':
      return { t: 'done' };
    case 'file':
      return isStr(o.path, 1000) && typeof o.content === 'string' ? { t: 'file', path: o.path, content: o.content } : undefined;
    case 'collected':
      return Array.isArray(o.skipped) && o.skipped.length <= 50 && o.skipped.every((x) => isStr(x, 1100)) && typeof o.truncated === 'boolean'
        ? { t: 'collected', skipped: o.skipped as string[], truncated: o.truncated } : undefined;
    default:
      return undefined;
  }
}

export function reportReader(options: { checks: number; maxLine: number; maxTotal: number; maxText: number; onEvent: (e: DriverEvent) => void }): ReportReader {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let total = 0;
  let malformed: string | undefined;
  const fail = (why: string) => { malformed ??= why; pending = []; pendingBytes = 0; return false; };
  const line = (bytes: Buffer): boolean => {
    if (bytes.length === 0) return true;
    let value: unknown;
    try { value = JSON.parse(decoder.decode(bytes)); } catch { return fail('the sandbox report held a line that is not JSON'); }
    const event = toEvent(value, options.checks, options.maxText);
    if (!event) return fail('the sandbox report held an event of an unknown shape');
    options.onEvent(event);
    return true;
  };
  return {
    get malformed() { return malformed; },
    push(chunk: Buffer): boolean {
      if (malformed) return false;
      total += chunk.length;
      if (total > options.maxTotal) return fail(`the sandbox report passed ${options.maxTotal} bytes`);
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, nl);
        if (pendingBytes + piece.length > options.maxLine) return fail(`the sandbox report held a line over ${options.maxLine} bytes`);
        const whole = pending.length ? Buffer.concat([...pending, piece]) : piece;
        pending = []; pendingBytes = 0;
        if (!line(whole)) return false;
        start = nl + 1;
      }
      const rest = chunk.subarray(start);
      if (rest.length) {
        pendingBytes += rest.length;
        if (pendingBytes > options.maxLine) return fail(`the sandbox report held a line over ${options.maxLine} bytes`);
        pending.push(Buffer.from(rest));
      }
      return true;
    },
  };
}
