import type { Kysely } from 'kysely';
import type { Environment, GeneratedFile } from '@codeloom/protocol';
import type { Database, GenerationsTable } from '../database.js';
import { MultiRowInsert } from '../multi-row-insert.js';
import type { DialectName } from '../open-database.js';
import type { WriteQueue } from '../write-queue.js';

export interface GenerationRecord {
  id: string; userId: string; environment: Environment; projectId: string | null; model: string; language: string;
  prompt: string; request: Record<string, unknown>; output: string; files: GeneratedFile[]; code: string;
  promptTokens: number; completionTokens: number; processingMs: number; finishReason: string; createdAt: string;
  /** Integer micro-dollars: every model call of the generation (repairs included). */
  costMicros: number;
}

const toRecord = (r: GenerationsTable): GenerationRecord => ({
  id: r.id, userId: r.user_id, environment: r.environment as Environment, projectId: r.project_id, model: r.model,
  language: r.language, prompt: r.prompt, request: JSON.parse(r.request) as Record<string, unknown>, output: r.output,
  files: JSON.parse(r.files) as GeneratedFile[], code: r.code, promptTokens: Number(r.prompt_tokens),
  completionTokens: Number(r.completion_tokens), processingMs: Number(r.processing_ms), finishReason: r.finish_reason, createdAt: r.created_at,
  costMicros: Number(r.cost_micros ?? 0),
});

const toRow = (g: GenerationRecord): GenerationsTable => ({
  id: g.id, user_id: g.userId, environment: g.environment, project_id: g.projectId, model: g.model, language: g.language,
  prompt: g.prompt, request: JSON.stringify(g.request), output: g.output, files: JSON.stringify(g.files), code: g.code,
  prompt_tokens: g.promptTokens, completion_tokens: g.completionTokens, processing_ms: g.processingMs,
  finish_reason: g.finishReason, created_at: g.createdAt, cost_micros: g.costMicros,
});

const COLUMNS = ['id', 'user_id', 'environment', 'project_id', 'model', 'language', 'prompt', 'request', 'output', 'files', 'code',
  'prompt_tokens', 'completion_tokens', 'processing_ms', 'finish_reason', 'created_at', 'cost_micros'] as const satisfies readonly (keyof GenerationsTable)[];

export class GenerationsRepo {
  /** Concurrent inserts (one per generation answered) share one statement and one commit, with the calls' usage rows. */
  private readonly queued: (row: GenerationsTable) => Promise<void>;

  constructor(private readonly db: Kysely<Database>, dialect: DialectName, writes: WriteQueue) {
    this.queued = writes.kind({ statement: new MultiRowInsert<GenerationsTable>(dialect, 'generations', COLUMNS) });
  }

  /** Resolves once the row is committed (with whichever other rows were waiting at the same time). */
  insert(g: GenerationRecord): Promise<void> {
    return this.queued(toRow(g));
  }

  /** Scoped by owner and environment: another account's generation is simply not found. */
  async get(userId: string, environment: Environment, id: string): Promise<GenerationRecord | undefined> {
    const row = await this.db.selectFrom('generations').selectAll()
      .where('id', '=', id).where('user_id', '=', userId).where('environment', '=', environment).executeTakeFirst();
    return row && toRecord(row);
  }

  async list(userId: string, environment: Environment, page: number, limit: number): Promise<{ rows: GenerationRecord[]; total: number }> {
    const base = this.db.selectFrom('generations').where('user_id', '=', userId).where('environment', '=', environment);
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(toRecord), total: Number(count.n) };
  }
}
