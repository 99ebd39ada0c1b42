import { AppError } from './app-error.js';

/** Raised by repositories when a unique constraint refuses a row, whatever the dialect (storage/storage-errors.ts); services turn it into their own 409. */
export class UniqueViolation extends AppError {
  constructor(readonly constraint?: string) {
    super('conflict', 'unique constraint violated');
    this.name = 'UniqueViolation';
  }
}
