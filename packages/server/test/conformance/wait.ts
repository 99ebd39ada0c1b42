import { expect } from 'vitest';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` holds; fails the case, naming `what`, after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) expect.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}
