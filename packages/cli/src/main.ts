#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { runServerCommand } from './server-commands.js';

const HELP = `codeloom — the Codeloom command line

Usage:
  codeloom serve                      start the server (same settings as npm start)
  codeloom migrate                    apply database migrations and exit
  codeloom admin set-plan EMAIL PLAN  change an organization's plan (free, pro, enterprise)
  codeloom admin users [--page N] [--limit N]   list accounts

Options:
  --json      machine-readable output
  -h, --help  this help

Settings come from the same environment variables as the server
(DATABASE_URL, CODELOOM_DATA_DIR, …; see docs/config.md).`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      page: { type: 'string' },
      limit: { type: 'string' },
    },
  });
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${HELP}\n`);
    return positionals.length === 0 && !values.help ? 1 : 0;
  }
  return runServerCommand(positionals, { json: values.json ?? false, page: values.page, limit: values.limit });
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`codeloom: ${message}\n`);
    process.exitCode = 1;
  },
);
