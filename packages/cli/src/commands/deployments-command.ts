import type { CreateDeploymentBody, Deployment, UpdateDeploymentBody } from '@codeloom/protocol';
import { clientFor, print, UsageError, type GlobalFlags } from '../cli-context.js';
import { table } from './usage-command.js';

const USAGE = `codeloom deployments list
codeloom deployments add --name NAME --provider openai|anthropic --url BASE_URL --models ID[=UPSTREAM][,…] [--api-key KEY] [--weight N] [--rpm N] [--tpm N] [--price IN/OUT] [--fim] [--embeddings] [--disabled]
codeloom deployments update ID [--name …] [--url …] [--api-key …] [--weight N] [--rpm N|none] [--tpm N|none] [--enable|--disabled]
codeloom deployments remove ID
codeloom deployments test ID`;

export interface DeploymentFlags {
  name?: string | undefined;
  provider?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  models?: string[] | undefined;
  weight?: string | undefined;
  rpm?: string | undefined;
  tpm?: string | undefined;
  price?: string | undefined;
  fim?: boolean | undefined;
  embeddings?: boolean | undefined;
  disabled?: boolean | undefined;
  enable?: boolean | undefined;
}

const int = (flag: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${flag} takes a whole number (got ${JSON.stringify(v)})`);
  return Number(v);
};
const perMinute = (flag: string, v: string | undefined): number | null | undefined => (v === 'none' ? null : int(flag, v));

/** `--price 2.5/10`: USD per million input/output tokens. */
function price(v: string | undefined): { input: number; output: number } {
  if (v === undefined) return { input: 0, output: 0 };
  const m = /^(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(v);
  if (!m) throw new UsageError(`--price takes INPUT/OUTPUT in USD per million tokens, e.g. 2.5/10 (got ${JSON.stringify(v)})`);
  return { input: Number(m[1]), output: Number(m[2]) };
}

const describe = (d: Deployment) => `${d.id}  ${d.name}${d.read_only ? ' (environment, read-only)' : ''}
  ${d.provider} ${d.base_url}  weight ${d.weight}${d.rpm !== null ? `  rpm ${d.rpm}` : ''}${d.tpm !== null ? `  tpm ${d.tpm}` : ''}  key ${d.has_api_key ? 'set' : 'none'}
  models: ${d.models.map((m) => (m.upstream_model && m.upstream_model !== m.id ? `${m.id} (${m.upstream_model})` : m.id)).join(', ')}
  health: ${d.health.status}${d.health.consecutive_failures ? `, ${d.health.consecutive_failures} failures in a row` : ''}${d.health.cooldown_until ? ` until ${d.health.cooldown_until}` : ''}${d.health.latency_ms !== null ? `, ${d.health.latency_ms} ms` : ''}`;

/** `codeloom deployments …`: model back-ends (administrators; CONTRACT §12.4). */
export async function deployments(flags: GlobalFlags, sub: string | undefined, args: string[], opts: DeploymentFlags): Promise<number> {
  const client = clientFor(flags);
  const api = client.admin.deployments;
  switch (sub) {
    case 'list': case undefined: {
      const list = await api.list();
      const rows = list.map((d) => [d.id, d.name, d.provider, d.models.map((m) => m.id).join(','), String(d.weight), d.health.status, d.read_only ? 'env' : '']);
      print(flags, list, list.length ? table(['ID', 'NAME', 'PROVIDER', 'MODELS', 'WEIGHT', 'HEALTH', ''], rows) : 'No deployments: only the template model `sandbox` is served. Add one with codeloom deployments add (see docs/models.md).');
      return 0;
    }
    case 'add': {
      if (!opts.name || !opts.provider || !opts.baseUrl || !opts.models?.length) throw new UsageError(`add needs --name, --provider, --url and --models\n${USAGE}`);
      const body: CreateDeploymentBody = {
        name: opts.name, provider: opts.provider as CreateDeploymentBody['provider'], base_url: opts.baseUrl,
        models: opts.models.map((spec) => {
          const [id, upstream] = spec.split('=');
          return { id: id!, ...(upstream ? { upstream_model: upstream } : {}), ...(opts.fim ? { fim: true } : {}), ...(opts.embeddings ? { embeddings: true } : {}), price: price(opts.price) };
        }),
        ...(opts.apiKey !== undefined ? { api_key: opts.apiKey } : {}),
        ...(opts.weight !== undefined ? { weight: int('weight', opts.weight)! } : {}),
        ...(opts.rpm !== undefined ? { rpm: perMinute('rpm', opts.rpm)! } : {}),
        ...(opts.tpm !== undefined ? { tpm: perMinute('tpm', opts.tpm)! } : {}),
        ...(opts.disabled ? { enabled: false } : {}),
      };
      const created = await api.create(body);
      print(flags, created, `Added ${describe(created)}`);
      return 0;
    }
    case 'update': {
      const id = args[0];
      if (!id) throw new UsageError(`update needs an ID\n${USAGE}`);
      const body: UpdateDeploymentBody = {
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.baseUrl !== undefined ? { base_url: opts.baseUrl } : {}),
        ...(opts.apiKey !== undefined ? { api_key: opts.apiKey } : {}),
        ...(opts.weight !== undefined ? { weight: int('weight', opts.weight)! } : {}),
        ...(opts.rpm !== undefined ? { rpm: perMinute('rpm', opts.rpm)! } : {}),
        ...(opts.tpm !== undefined ? { tpm: perMinute('tpm', opts.tpm)! } : {}),
        ...(opts.disabled ? { enabled: false } : opts.enable ? { enabled: true } : {}),
      };
      if (!Object.keys(body).length) throw new UsageError(`update needs something to change\n${USAGE}`);
      const updated = await api.update(id, body);
      print(flags, updated, `Updated ${describe(updated)}`);
      return 0;
    }
    case 'remove': {
      const id = args[0];
      if (!id) throw new UsageError(`remove needs an ID\n${USAGE}`);
      const out = await api.delete(id);
      print(flags, out, `Removed ${id}.`);
      return 0;
    }
    case 'test': {
      const id = args[0];
      if (!id) throw new UsageError(`test needs an ID\n${USAGE}`);
      const result = await api.test(id);
      print(flags, result, result.ok ? `OK: ${result.model} answered in ${result.latency_ms} ms.` : `Failed: ${result.model}: ${result.error?.code}: ${result.error?.message} (${result.latency_ms} ms)`);
      return result.ok ? 0 : 1;
    }
    default:
      throw new UsageError(USAGE);
  }
}

export const DEPLOYMENTS_HELP = USAGE;
