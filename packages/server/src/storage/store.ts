import type { DatabaseHandle } from './open-database.js';
import { AccountsRepo } from './repos/accounts-repo.js';
import { ApiKeysRepo } from './repos/api-keys-repo.js';
import { SessionsRepo } from './repos/sessions-repo.js';
import { SigningKeysRepo } from './repos/signing-keys-repo.js';

/** Every repository over one database handle. Services receive this; routes never see SQL. */
export interface Store {
  handle: DatabaseHandle;
  accounts: AccountsRepo;
  sessions: SessionsRepo;
  apiKeys: ApiKeysRepo;
  signingKeys: SigningKeysRepo;
}

export function createStore(handle: DatabaseHandle): Store {
  const { db } = handle;
  return {
    handle,
    accounts: new AccountsRepo(db),
    sessions: new SessionsRepo(db),
    apiKeys: new ApiKeysRepo(db),
    signingKeys: new SigningKeysRepo(db),
  };
}
