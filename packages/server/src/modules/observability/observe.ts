import type { Kysely } from 'kysely';
import type { ModelMetrics } from '../../plugins/metrics.js';
import { failSpan, type Tracing } from '../../plugins/tracing.js';
import type { Database } from '../../storage/database.js';
import type { RunFinished } from '../runs/run-finished.js';
import type { VerificationService } from '../verify/verification-service.js';

/** `codeloom_runs_total{status}`: every finished run, whichever path ended it (RunFinished is told once per run). */
export function observeRuns(finished: RunFinished, metrics: ModelMetrics): RunFinished {
  return (run) => {
    metrics.runs.inc({ status: run.status });
    finished(run);
  };
}

/**
 * `codeloom_verifications_total{status}` and, with tracing on, a `verify <language>` span per attempt: the
 * service's `verify` is wrapped where it is built (the composition root), so its own code is unchanged.
 */
export function observeVerifications(service: VerificationService, metrics: ModelMetrics, tracing: Tracing | undefined): void {
  const verify = service.verify.bind(service);
  service.verify = async (language, files, options) => {
    const traced = tracing?.start(`verify ${language}`, options.trace, { 'codeloom.verify.language': language, 'codeloom.verify.attempt': options.attempt });
    try {
      const attempt = await verify(language, files, options);
      metrics.verifications.inc({ status: attempt.status });
      traced?.span.setAttributes({ 'codeloom.verify.status': attempt.status, 'codeloom.verify.duration_ms': attempt.duration_ms });
      if (traced && attempt.status === 'error') failSpan(traced.span, 'verification_error');
      return attempt;
    } catch (error) {
      metrics.verifications.inc({ status: 'error' });
      if (traced) failSpan(traced.span, 'verification_error', error instanceof Error ? error.message : undefined);
      throw error;
    } finally {
      traced?.span.end();
    }
  };
}

/** `codeloom_run_queue_depth`: runs waiting for an executor on any instance (an indexed count at each scrape). */
export function queuedRuns(db: Kysely<Database>): () => Promise<number> {
  return async () => {
    const row = await db.selectFrom('runs').where('status', '=', 'queued').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
    return Number(row?.n ?? 0);
  };
}

