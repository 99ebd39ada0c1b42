import type { DatabaseHandle } from './open-database.js';
import { AccountsRepo } from './repos/accounts-repo.js';
import { ApiKeysRepo } from './repos/api-keys-repo.js';
import { GenerationsRepo } from './repos/generations-repo.js';
import { ProjectsRepo } from './repos/projects-repo.js';
import { OwnedDocumentsRepo } from './repos/owned-documents-repo.js';
import { RunsRepo } from './repos/runs-repo.js';
import type { AgentData, WorkflowData } from './repos/document-data.js';
import { SessionsRepo } from './repos/sessions-repo.js';
import { SigningKeysRepo } from './repos/signing-keys-repo.js';
import { OAuthClientsRepo } from './repos/oauth-clients-repo.js';
import { OAuthGrantsRepo } from './repos/oauth-grants-repo.js';
import { WebSessionsRepo } from './repos/web-sessions-repo.js';
import { UsageRepo } from './repos/usage-repo.js';
import { BudgetsRepo } from './repos/budgets-repo.js';
import { WebhooksRepo } from './repos/webhooks-repo.js';
import { RequestLogsRepo } from './repos/request-logs-repo.js';
import { ResponsesRepo } from './repos/responses-repo.js';
import { DeploymentsRepo } from './repos/deployments-repo.js';
import { PasswordsRepo } from './repos/passwords-repo.js';
import { WriteQueue } from './write-queue.js';

/** Every repository over one database handle. Services receive this; routes never see SQL. */
export interface Store {
  handle: DatabaseHandle;
  accounts: AccountsRepo;
  sessions: SessionsRepo;
  apiKeys: ApiKeysRepo;
  signingKeys: SigningKeysRepo;
  generations: GenerationsRepo;
  projects: ProjectsRepo;
  agents: OwnedDocumentsRepo<AgentData>;
  workflows: OwnedDocumentsRepo<WorkflowData>;
  runs: RunsRepo;
  oauthClients: OAuthClientsRepo;
  oauthGrants: OAuthGrantsRepo;
  webSessions: WebSessionsRepo;
  usage: UsageRepo;
  webhooks: WebhooksRepo;
  budgets: BudgetsRepo;
  responses: ResponsesRepo;
  /** Model deployments (CONTRACT §12.4). */
  deployments: DeploymentsRepo;
  /** One row per model call (the request log), written with the call's usage row. */
  requestLogs: RequestLogsRepo;
  /** Password changes and reset tokens (each with the end of the account's sessions). */
  passwords: PasswordsRepo;
}

export function createStore(handle: DatabaseHandle): Store {
  const { db } = handle;
  const writes = new WriteQueue(db, handle.dialect);
  const generations = new GenerationsRepo(db, handle.dialect, writes);
  return {
    // Rows still being group-committed are written before the database closes.
    handle: { ...handle, close: () => writes.drain().then(() => handle.close()) },
    accounts: new AccountsRepo(db),
    sessions: new SessionsRepo(db),
    apiKeys: new ApiKeysRepo(db),
    signingKeys: new SigningKeysRepo(db),
    generations,
    projects: new ProjectsRepo(db),
    agents: new OwnedDocumentsRepo<AgentData>(db, 'agents'),
    workflows: new OwnedDocumentsRepo<WorkflowData>(db, 'workflows'),
    runs: new RunsRepo(db),
    oauthClients: new OAuthClientsRepo(db),
    oauthGrants: new OAuthGrantsRepo(db),
    webSessions: new WebSessionsRepo(db),
    usage: new UsageRepo(db, handle.dialect, writes),
    webhooks: new WebhooksRepo(db),
    budgets: new BudgetsRepo(db),
    responses: new ResponsesRepo(db),
    deployments: new DeploymentsRepo(db),
    requestLogs: new RequestLogsRepo(db, handle.dialect, writes),
    passwords: new PasswordsRepo(db),
  };
}
