import { corsOriginProblems } from './cors-origins.js';
import { ConfigError } from '../errors.js';
import { SETTINGS, type SettingDef } from './config-schema.js';
import { resolveIssuers, type DerivedSettings } from './issuer.js';
import { parseModelPrices } from './model-prices.js';

type KindValue<K extends SettingDef['kind']> = K extends 'int' ? number : K extends 'bool' ? boolean : K extends 'list' ? string[] : string;
type Setting = (typeof SETTINGS)[number];
type Required<S> = S extends { default: string } ? true : false;

export type Config = Readonly<
  { [S in Setting as Required<S> extends true ? S['key'] : never]: KindValue<S['kind']> } & {
    [S in Setting as Required<S> extends true ? never : S['key']]?: KindValue<S['kind']>;
  } & DerivedSettings
>;

function parseValue(def: SettingDef, raw: string, problems: string[]): unknown {
  const bad = (why: string) => {
    problems.push(`${def.env}: ${why} (got ${def.secret ? 'a value' : JSON.stringify(raw)})`);
    return undefined;
  };
  switch (def.kind) {
    case 'int': {
      if (!/^-?\d+$/.test(raw.trim())) return bad('must be an integer');
      const n = Number(raw);
      if (def.min !== undefined && n < def.min) return bad(`must be ≥ ${def.min}`);
      if (def.max !== undefined && n > def.max) return bad(`must be ≤ ${def.max}`);
      return n;
    }
    case 'bool': {
      const v = raw.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(v)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
      return bad('must be true or false');
    }
    case 'url':
      try {
        new URL(raw);
        return raw;
      } catch {
        return bad('must be an absolute URL');
      }
    case 'list':
      return raw.split(',').map((s) => s.trim()).filter(Boolean);
    case 'enum':
      return def.values?.includes(raw) ? raw : bad(`must be one of ${def.values?.join(', ')}`);
    default:
      return raw;
  }
}

/** Reads and validates every setting; throws ConfigError listing every problem at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<string, unknown>> = {}): Config {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const def of SETTINGS as readonly SettingDef[]) {
    const raw = env[def.env];
    const source = raw !== undefined && raw !== '' ? raw : def.default;
    if (source !== undefined) {
      const v = parseValue(def, source, problems);
      if (v !== undefined) out[def.key] = v;
    }
  }
  if (out.databaseUrl && !/^postgres(ql)?:/.test(String(out.databaseUrl))) problems.push('DATABASE_URL: must be a postgres:// URL');
  if (out.redisUrl && !/^rediss?:/.test(String(out.redisUrl))) problems.push('REDIS_URL: must be a redis:// URL');
  if (out.openaiModels && !out.openaiBaseUrl) problems.push('CODELOOM_OPENAI_MODELS: set OPENAI_BASE_URL too');
  // Without a model list the provider serves nothing and the server would run on the sandbox model alone, silently.
  if (out.openaiBaseUrl && !(out.openaiModels as string[] | undefined)?.length) problems.push('CODELOOM_OPENAI_MODELS: OPENAI_BASE_URL is set, so list the model ids to serve from it (e.g. CODELOOM_OPENAI_MODELS=gpt-4o-mini), or unset OPENAI_BASE_URL');
  for (const id of (out.openaiFimModels as string[] | undefined) ?? []) if (!(out.openaiModels as string[] | undefined)?.includes(id)) problems.push(`CODELOOM_OPENAI_FIM_MODELS: "${id}" is not one of CODELOOM_OPENAI_MODELS`);
  for (const id of (out.openaiEmbeddingModels as string[] | undefined) ?? []) if (!(out.openaiModels as string[] | undefined)?.includes(id)) problems.push(`CODELOOM_OPENAI_EMBEDDING_MODELS: "${id}" is not one of CODELOOM_OPENAI_MODELS`);
  if (out.anthropicModels && !out.anthropicApiKey) problems.push('CODELOOM_ANTHROPIC_MODELS: set ANTHROPIC_API_KEY too');
  if (out.smtpUrl && !/^smtps?:\/\//i.test(String(out.smtpUrl))) problems.push('CODELOOM_SMTP_URL: must be an smtp:// or smtps:// URL');
  if (out.signup === 'domains' && !(out.signupDomains as string[] | undefined)?.length) problems.push('CODELOOM_SIGNUP_DOMAINS: CODELOOM_SIGNUP=domains needs the list of email domains that may sign up');
  problems.push(...parseModelPrices(out.modelPrices as string | undefined).problems);
  problems.push(...corsOriginProblems(out.corsOrigins as string[] | undefined));
  if (problems.length) throw new ConfigError(problems);
  Object.assign(out, overrides);
  resolveIssuers(out);
  return Object.freeze(out) as Config;
}
