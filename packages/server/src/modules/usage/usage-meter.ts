import type { UsageEntry, UsageMeter } from '../generate/model-call.js';
import type { UsageRepo } from '../../storage/repos/usage-repo.js';

const DAY_MS = 86_400_000;
let today = '';
let tomorrowMs = 0;

/** The UTC day (YYYY-MM-DD) a call is counted on (today's is worked out once a day). */
export const usageDay = (at?: Date): string => {
  if (at) return at.toISOString().slice(0, 10);
  const now = Date.now();
  if (now >= tomorrowMs || now < tomorrowMs - DAY_MS) {
    today = new Date(now).toISOString().slice(0, 10);
    tomorrowMs = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
  }
  return today;
};

/**
 * Usage accounting: every settled model call (succeeded, failed or cancelled, with the tokens it used)
 * is added to its account / environment / API key / model / day row. A storage failure here is logged,
 * never the call's failure: the answer was already made. Concurrent calls share one commit, with the
 * generations stored at the same time (storage/write-queue.ts): `record` resolves once its call is counted.
 */
export class StoreUsageMeter implements UsageMeter {
  constructor(private readonly repo: UsageRepo, private readonly onError: (error: unknown) => void) {}

  async record(entry: UsageEntry): Promise<void> {
    try {
      await this.repo.record({
        userId: entry.subject.user.id, environment: entry.subject.environment, apiKeyId: entry.subject.apiKeyId ?? null,
        model: entry.model, day: usageDay(), failed: entry.outcome !== 'succeeded',
        promptTokens: entry.promptTokens, completionTokens: entry.completionTokens, costMicros: entry.costMicros,
      });
    } catch (error) {
      this.onError(error);
    }
  }
}
