import { AppError } from './app-error.js';

/** The verification sandbox cannot run at all (bwrap missing or broken); nothing has run unisolated (modules/verify). */
export class SandboxUnavailableError extends AppError {
  constructor(reason: string) {
    super('service_unavailable', reason);
    this.name = 'SandboxUnavailableError';
  }
}
