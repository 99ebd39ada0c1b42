import { lookupTable } from '@codeloom/protocol';

/** Help text per command (`codeloom CMD --help`) and the overview (`codeloom --help`). */
export const COMMAND_HELP = lookupTable<string>({
  serve: 'codeloom serve\n  Start the server with the settings of docs/config.md (same as npm start).',
  migrate: 'codeloom migrate\n  Apply database migrations and exit.',
  admin: 'codeloom admin set-plan EMAIL PLAN   change an organization\'s plan (free, pro, enterprise)\ncodeloom admin grant EMAIL   make the account an instance administrator (admin routes, model deployments)\ncodeloom admin revoke EMAIL   take that away\ncodeloom admin users [--page N] [--limit N]   list every account and their count (or one page of them)\n  Server-side: uses DATABASE_URL / CODELOOM_DATA_DIR like the server.',
  register: 'codeloom register --email EMAIL --name "YOUR NAME" [--password PASSWORD]\n  Create an account and sign in with it (stored like login). Without --password it is read from the terminal (or one line of standard input).',
  login: 'codeloom login --email EMAIL [--password PASSWORD]\ncodeloom login --api-key KEY\n  Sign in and store the credentials (mode 0600) in ~/.config/codeloom (or $CODELOOM_CONFIG_DIR).\n  They are stored only once the server has accepted them: a failed login keeps the previous one.\n  Without --password the password is read from the terminal (or one line of standard input).',
  logout: 'codeloom logout\n  End the session on the server and forget the stored credentials (the server URL is kept for the next login).',
  whoami: 'codeloom whoami\n  Show the signed-in account, plan, environment and permissions.',
  keys: 'codeloom keys create NAME [--scope read:code ...] [--expires RFC3339] [--rpm N] [--tpm N] [--monthly-tokens N]\ncodeloom keys list [--page N] [--limit N]\ncodeloom keys update KEY_ID [--name NAME] [--rpm N|none] [--tpm N|none] [--monthly-tokens N|none]\ncodeloom keys revoke KEY_ID\n  --rpm, --tpm, --monthly-tokens: the key\'s own limits (requests a minute, model tokens a minute, model tokens a calendar month),\n  each at most the plan\'s; none removes one. See docs/api.md "Per-key limits".',
  generate: 'codeloom generate "PROMPT" [--language ts] [--model M] [--context key=value ...] [--project PROJECT_ID] [--out DIR] [--verify] [--repair N]\n  Streams the generated text live, then lists the files; --out writes them. --verify runs the build and tests in the server\'s sandbox and prints the verdict (exit 1 when it failed); --repair N (0–3) lets the model fix a failure N times.',
  projects: 'codeloom projects list [--page N] [--limit N]\ncodeloom projects create NAME [--template ID] [--description TEXT]\ncodeloom projects files PROJECT_ID [PATH] [--page N] [--limit N]\ncodeloom projects templates\ncodeloom projects revisions PROJECT_ID [--page N] [--limit N]\ncodeloom projects diff PROJECT_ID REVISION\ncodeloom projects restore PROJECT_ID REVISION\ncodeloom projects download PROJECT_ID [REVISION] [--out FILE.zip]\n  Every change to a project\'s files is a numbered revision: list them, show one\'s diffs, restore one (a new revision), or download the files of one (or the current files) as a zip.',
  workflows: 'codeloom workflows create NAME --agent TYPE[:MODEL] ... [--config key=value ...]\ncodeloom workflows list [--page N] [--limit N]\ncodeloom workflows show WORKFLOW_ID\ncodeloom workflows delete WORKFLOW_ID\n  Agent types, in the order they work: planner, architect, coder, reviewer, tester, documenter\n  (--agent planner --agent coder:sandbox, or --agent planner,coder,reviewer). Run one: codeloom run WORKFLOW_ID "TASK".',
  agents: 'codeloom agents create NAME --model MODEL [--config temperature=0.2 --config maxTokens=2000 --config specialization=coder]\ncodeloom agents list [--page N] [--limit N]\ncodeloom agents show AGENT_ID\ncodeloom agents delete AGENT_ID\n  Run one: codeloom run AGENT_ID "TASK".',
  runs: 'codeloom runs list [--page N] [--limit N]\ncodeloom runs show RUN_ID\ncodeloom runs cancel RUN_ID',
  run: 'codeloom run WORKFLOW_ID|AGENT_ID "TASK" [--require key=value ...] [--project PROJECT_ID] [--out DIR] [--max-tokens N] [--max-cost-usd USD]\n  Executes the workflow and shows each step live; exits 1 when the run does not succeed.\n  --max-tokens and --max-cost-usd are ceilings on the whole run (not the per-step maxTokens); they replace the workflow\'s.',
  models: 'codeloom models\n  List the models the server offers (* marks the default).',
  eval: 'codeloom eval [--model M] [--samples N] [--only python|typescript|c|TASK] [--tasks SET.jsonl] [--reference] [--engineer|--compare] [--out report.json]\n  From a Codeloom checkout: pass@1 (pass@k) of a model on 40 tasks with hidden tests, verified in the sandbox (npm run eval), with tokens, cost and wall time per solved task.\n  --tasks reads a HumanEval or MBPP JSON Lines set; --reference checks a set with its own solutions; --engineer runs the engineer agent on each task, --compare both ways.',
  deployments: 'codeloom deployments list\ncodeloom deployments add --name NAME --provider openai|anthropic --url BASE_URL --models ID[=UPSTREAM][,…] [--api-key KEY] [--weight N] [--rpm N] [--tpm N] [--price IN/OUT] [--fim] [--embeddings] [--disabled]\ncodeloom deployments update ID [--name NAME] [--url BASE_URL] [--api-key KEY] [--weight N] [--rpm N|none] [--tpm N|none] [--enable|--disabled]\ncodeloom deployments remove ID\ncodeloom deployments test ID\n  Model back-ends (administrators only): e.g. Ollama: --provider openai --url http://127.0.0.1:11434/v1 --models qwen2.5-coder:7b. See docs/models.md.',
  usage: 'codeloom usage [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--by day|model|api_key]\n  Model calls, tokens and cost (USD, to the micro-dollar) of your account in this environment (--sandbox: the sandbox\'s), per UTC day (default), model or API key;\n  from and to are inclusive (default: the last 30 days). A table with a total row; --json prints the API\'s report.',
});

export const OVERVIEW = `codeloom — the Codeloom command line

Server side (same environment variables as the server):
  serve, migrate, admin set-plan EMAIL PLAN, admin grant|revoke EMAIL, admin users, eval --model M

Client side (talks to a Codeloom server):
  register, login, logout, whoami, keys create|list|update|revoke, generate, models, usage,
  projects list|create|files|templates|revisions|diff|restore|download, workflows create|list|show|delete,
  agents create|list|show|delete, run, runs list|show|cancel,
  deployments list|add|update|remove|test (administrators)

Global options:
  --json               machine-readable output on standard output
  --sandbox            run in the sandbox environment (X-Environment: sandbox)
  --base-url URL       the server (default: $CODELOOM_BASE_URL, the server of the last login, or http://127.0.0.1:8080)
  --page N, --limit N  which page of a list, and how many items a page (1–100, default 20)
  -h, --help           help for a command: codeloom generate --help

Credentials: codeloom login, or $CODELOOM_API_KEY. Errors print one line "codeloom: CODE: detail" and exit non-zero (2 for usage errors).
Failed requests (rate limits, 5xx, dropped connections) are retried twice; standard error says so, with the seconds left.
Installed from npm or the release tarballs, codeloom is the client; the server side runs from a Codeloom checkout:
npm run --silent cli -- COMMAND (--silent keeps npm's banner off standard output, so --json stays clean).`;
