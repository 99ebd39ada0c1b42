import type { DatabaseHandle } from './open-database.js';
import { AccountsRepo } from './repos/accounts-repo.js';
import { ApiKeysRepo } from './repos/api-keys-repo.js';
import { GenerationsRepo } from './repos/generations-repo.js';
import { ProjectsRepo } from './repos/projects-repo.js';
import { OwnedDocumentsRepo } from './repos/owned-documents-repo.js';
import { RunsRepo } from './repos/runs-repo.js';
import type { AgentData, WorkflowData } from '../modules/agents/agent-documents.js';
import { SessionsRepo } from './repos/sessions-repo.js';
import { SigningKeysRepo } from './repos/signing-keys-repo.js';

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
}

export function createStore(handle: DatabaseHandle): Store {
  const { db } = handle;
  return {
    handle,
    accounts: new AccountsRepo(db),
    sessions: new SessionsRepo(db),
    apiKeys: new ApiKeysRepo(db),
    signingKeys: new SigningKeysRepo(db),
    generations: new GenerationsRepo(db),
    projects: new ProjectsRepo(db),
    agents: new OwnedDocumentsRepo<AgentData>(db, 'agents'),
    workflows: new OwnedDocumentsRepo<WorkflowData>(db, 'workflows'),
    runs: new RunsRepo(db),
  };
}
