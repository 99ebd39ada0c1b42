import type { UsageEntry, UsageMeter } from '../generate/model-call.js';
import { GroupCommit } from '../../storage/group-commit.js';
import type { UsageIncrement, UsageRepo } from '../../storage/repos/usage-repo.js';

/** The UTC day (YYYY-MM-DD) a call is counted on. */
export const usageDay = (at: Date = new Date()) => at.toISOString().slice(0, 10);

/**
 * Usage accounting: every settled model call (succeeded, failed or cancelled, with the tokens it used)
 * is added to its account / environment / API key / model / day row. A storage failure here is logged,
 * never the call's failure: the answer was already made. Concurrent calls share one commit (group commit):
 * `record` resolves once its call is counted.
 */
export class StoreUsageMeter implements UsageMeter {
  private readonly commits: GroupCommit<UsageIncrement>;

  constructor(repo: UsageRepo, private readonly onError: (error: unknown) => void) {
    this.commits = new GroupCommit<UsageIncrement>({ writeBatch: (items) => repo.addMany(items), writeOne: (item) => repo.add(item) });
  }

  async record(entry: UsageEntry): Promise<void> {
    try {
      await this.commits.submit({
        userId: entry.subject.user.id, environment: entry.subject.environment, apiKeyId: entry.subject.apiKeyId ?? null,
        model: entry.model, day: usageDay(), failed: entry.outcome !== 'succeeded',
        promptTokens: entry.promptTokens, completionTokens: entry.completionTokens,
      });
    } catch (error) {
      this.onError(error);
    }
  }
}
