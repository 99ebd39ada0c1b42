#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { CodeloomError } from '@codeloom/client';
import { UsageError, type GlobalFlags } from './cli-context.js';
import { COMMAND_HELP, OVERVIEW } from './help.js';
import { keys, login, logout, models, whoami } from './commands/account-commands.js';
import { agents } from './commands/agents-command.js';
import { generate } from './commands/generate-command.js';
import { projects } from './commands/projects-command.js';
import { register } from './commands/register-command.js';
import { run } from './commands/run-command.js';
import { runs } from './commands/runs-command.js';
import { usage } from './commands/usage-command.js';
import { workflows } from './commands/workflows-command.js';
import { deployments } from './commands/deployments-command.js';
import { parsePaging } from './paging.js';

const SERVER_COMMANDS = new Set(['serve', 'migrate', 'admin']);

async function main(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      sandbox: { type: 'boolean' },
      'base-url': { type: 'string' },
      page: { type: 'string' },
      limit: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'api-key': { type: 'string' },
      scope: { type: 'string', multiple: true },
      expires: { type: 'string' },
      language: { type: 'string', short: 'l' },
      model: { type: 'string', short: 'm' },
      context: { type: 'string', multiple: true, short: 'c' },
      require: { type: 'string', multiple: true, short: 'r' },
      out: { type: 'string', short: 'o' },
      project: { type: 'string' },
      template: { type: 'string' },
      description: { type: 'string' },
      name: { type: 'string' },
      agent: { type: 'string', multiple: true, short: 'a' },
      config: { type: 'string', multiple: true },
      verify: { type: 'boolean' },
      repair: { type: 'string' },
      samples: { type: 'string' },
      only: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      by: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      'monthly-tokens': { type: 'string' },
      'max-cost-usd': { type: 'string' },
      'max-tokens': { type: 'string' },
      provider: { type: 'string' },
      url: { type: 'string' },
      models: { type: 'string' },
      weight: { type: 'string' },
      price: { type: 'string' },
      fim: { type: 'boolean' },
      embeddings: { type: 'boolean' },
      disabled: { type: 'boolean' },
      enable: { type: 'boolean' },
      tasks: { type: 'string' },
      reference: { type: 'boolean' },
      engineer: { type: 'boolean' },
      compare: { type: 'boolean' },
    },
  });
  const [command, ...rest] = positionals;
  if (!command) {
    process.stdout.write(`${OVERVIEW}\n`);
    return v.help ? 0 : 2;
  }
  if (v.help) {
    const help = COMMAND_HELP[command];
    if (!help) throw new UsageError(`unknown command: ${command} (see codeloom --help)`);
    process.stdout.write(`${help}\n`);
    return 0;
  }
  // The server (Fastify, database drivers) loads only for server commands, so client commands start fast.
  if (command === 'eval') return (await import('./eval-command.js')).evalCommand({ model: v.model, samples: v.samples, only: v.only, json: v.out, tasks: v.tasks, reference: v.reference, engineer: v.engineer, compare: v.compare });
  if (SERVER_COMMANDS.has(command)) {
    const server = await loadServerCommands(command);
    return server ? server.runServerCommand(positionals, { json: v.json ?? false, page: v.page, limit: v.limit }) : 2;
  }
  const flags: GlobalFlags = { json: v.json ?? false, sandbox: v.sandbox ?? false, baseUrl: v['base-url'] };
  const paging = parsePaging(v.page, v.limit);
  switch (command) {
    case 'register': return register(flags, { email: v.email, name: v.name, password: v.password });
    case 'login': return login(flags, { ...(v.email ? { email: v.email } : {}), ...(v.password !== undefined ? { password: v.password } : {}), ...(v['api-key'] ? { apiKey: v['api-key'] } : {}) });
    case 'logout': return logout(flags);
    case 'whoami': return whoami(flags);
    case 'keys': return keys(flags, rest[0], rest.slice(1), { scopes: v.scope, expires: v.expires, name: v.name, limits: { rpm: v.rpm, tpm: v.tpm, monthlyTokens: v['monthly-tokens'] }, paging });
    case 'generate': return generate(flags, rest.join(' ') || undefined, { language: v.language, model: v.model, context: v.context, out: v.out, project: v.project, verify: v.verify, repair: v.repair });
    case 'projects': return projects(flags, rest[0], rest.slice(1), { template: v.template, description: v.description, out: v.out, paging });
    case 'workflows': return workflows(flags, rest[0], rest.slice(1), { agent: v.agent, config: v.config, paging });
    case 'agents': return agents(flags, rest[0], rest.slice(1), { model: v.model, config: v.config, paging });
    case 'runs': return runs(flags, rest[0], rest.slice(1), { paging });
    case 'run': return run(flags, rest[0], rest.slice(1).join(' ') || undefined, { require: v.require, out: v.out, project: v.project, maxCostUsd: v['max-cost-usd'], maxTokens: v['max-tokens'] });
    case 'models': return models(flags);
    case 'usage': return usage(flags, rest, { from: v.from, to: v.to, by: v.by });
    case 'deployments': return deployments(flags, rest[0], rest.slice(1), {
      name: v.name, provider: v.provider, baseUrl: v.url, apiKey: v['api-key'], models: v.models?.split(',').map((m) => m.trim()).filter(Boolean) ?? (v.model ? [v.model] : undefined),
      weight: v.weight, rpm: v.rpm, tpm: v.tpm, price: v.price, fim: v.fim, embeddings: v.embeddings, disabled: v.disabled, enable: v.enable,
    });
    default: throw new UsageError(`unknown command: ${command} (see codeloom --help)`);
  }
}

/**
 * serve, migrate and admin run the server's own code (@codeloom/server: Fastify, the database drivers), which is
 * not published: the `codeloom` installed from npm (or from the release tarballs) is the client only, and says
 * where those commands run instead of failing on a missing module.
 */
async function loadServerCommands(command: string): Promise<typeof import('./server-commands.js') | undefined> {
  try {
    return await import('./server-commands.js');
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !String(e.message).includes('@codeloom/server')) throw error;
    process.stderr.write(`codeloom: ${command} runs on the server, and this codeloom is the client command only (the server is not an installed package).\n`
      + `  Run it where the server is installed, from its Codeloom checkout: npm run --silent cli -- ${command === 'serve' ? 'serve (or npm start)' : `${command} …`} (see docs/operations.md).\n`);
    return undefined;
  }
}

function describe(error: unknown): { line: string; code: number } {
  if (error instanceof UsageError) return { line: error.message, code: 2 };
  if (CodeloomError.isInstance(error)) return { line: `${error.code}: ${error.detail}${error.errors?.length ? ` ${error.errors.map((f) => `${f.path} ${f.message}`).join('; ')}` : ''}${error.requestId ? ` (request ${error.requestId})` : ''}`, code: 1 };
  const e = error as { code?: string; message?: string; cause?: { code?: string } };
  if (e?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || e?.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' || e?.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return { line: `${e.message} (see codeloom --help)`, code: 2 };
  if (e?.cause?.code === 'ECONNREFUSED' || e?.code === 'ECONNREFUSED') return { line: 'service_unavailable: cannot reach the Codeloom server (is it running? see --base-url)', code: 1 };
  return { line: e?.message ?? String(error), code: 1 };
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    const { line, code } = describe(error);
    process.stderr.write(`codeloom: ${line}\n`);
    process.exitCode = code;
  },
);
