/**
 * Limit windows are fixed and aligned to multiples of their length (a minute window starts at :00, a
 * 15-minute one at :00, :15, …). A test that fills a window and expects the refusal must do it inside one
 * window: this waits, when less than `marginSec` of the current window is left, until the next one starts.
 */
export async function awayFromWindowEnd(marginSec = 10, windowSec = 60): Promise<void> {
  const windowMs = windowSec * 1000;
  const leftMs = windowMs - (Date.now() % windowMs);
  if (leftMs < marginSec * 1000) await new Promise((r) => setTimeout(r, leftMs + 50));
}
