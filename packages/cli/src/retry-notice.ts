import type { RetryInfo } from '@codeloom/client';

/**
 * The SDK's onRetry for the command line: while it waits before repeating a
 * request (a 429 rate limit above all, whose Retry-After can be most of a
 * minute), standard error says so, with the seconds left; on a terminal the
 * line counts down. Standard output stays clean for --json.
 */
export function retryNotice(info: RetryInfo): void {
  const { error } = info;
  if (!error.status) return; // a dropped connection is retried within a second or two, quietly; if it stays down, the error says so
  const what = error.status === 429 ? 'rate limited' : error.status ? `${error.status} ${error.code}` : error.code.replace(/_/g, ' ');
  const line = (secs: number) => `codeloom: ${what}; retrying in ${secs} s (retry ${info.attempt} of ${info.maxRetries})`;
  let left = Math.max(1, Math.ceil(info.delayMs / 1000));
  if (!process.stderr.isTTY) {
    process.stderr.write(`${line(left)}\n`);
    return;
  }
  process.stderr.write(line(left));
  const timer = setInterval(() => {
    left -= 1;
    process.stderr.write(left > 0 ? `\r\x1b[2K${line(left)}` : `\r\x1b[2K`);
    if (left <= 0) clearInterval(timer);
  }, 1000);
  timer.unref();
}
