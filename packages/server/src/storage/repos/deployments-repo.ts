import type { Kysely } from 'kysely';
import type { Database, DeploymentsTable } from '../database.js';

/** One served model of a deployment, as stored (the API's field names). */
export interface DeploymentModelRecord {
  id: string;
  upstream_model?: string | undefined;
  fim?: boolean | undefined;
  embeddings?: boolean | undefined;
  context_window?: number | undefined;
  max_output_tokens?: number | undefined;
  price: { input: number; output: number; cached_input?: number | undefined };
}

/** A deployment as stored: the API key still encrypted. */
export interface DeploymentRecord {
  id: string;
  name: string;
  provider: 'openai' | 'anthropic';
  baseUrl: string;
  apiKeyEnc: string | null;
  models: DeploymentModelRecord[];
  weight: number;
  rpm: number | null;
  tpm: number | null;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

const toRecord = (r: DeploymentsTable): DeploymentRecord => ({
  id: r.id, name: r.name, provider: r.provider as DeploymentRecord['provider'], baseUrl: r.base_url, apiKeyEnc: r.api_key_enc,
  models: JSON.parse(r.models) as DeploymentModelRecord[], weight: Number(r.weight), rpm: r.rpm === null ? null : Number(r.rpm),
  tpm: r.tpm === null ? null : Number(r.tpm), enabled: Number(r.enabled) === 1, createdAt: r.created_at, updatedAt: r.updated_at,
});

const toRow = (d: DeploymentRecord): DeploymentsTable => ({
  id: d.id, name: d.name, provider: d.provider, base_url: d.baseUrl, api_key_enc: d.apiKeyEnc, models: JSON.stringify(d.models),
  weight: d.weight, rpm: d.rpm, tpm: d.tpm, enabled: d.enabled ? 1 : 0, created_at: d.createdAt, updated_at: d.updatedAt,
});

/** Model deployments (instance-wide, administrators only). */
export class DeploymentsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async list(): Promise<DeploymentRecord[]> {
    const rows = await this.db.selectFrom('deployments').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(toRecord);
  }

  async find(id: string): Promise<DeploymentRecord | undefined> {
    const row = await this.db.selectFrom('deployments').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  async insert(d: DeploymentRecord): Promise<void> {
    await this.db.insertInto('deployments').values(toRow(d)).execute();
  }

  async update(d: DeploymentRecord): Promise<void> {
    const { id, created_at: _c, ...rest } = toRow(d);
    await this.db.updateTable('deployments').set(rest).where('id', '=', id).execute();
  }

  async setApiKeyEnc(id: string, apiKeyEnc: string): Promise<void> {
    await this.db.updateTable('deployments').set({ api_key_enc: apiKeyEnc }).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('deployments').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
