import { AppError } from './app-error.js';

/**
 * The one cancellation: the caller went away or cancelled, a run was cancelled or its server is
 * stopping. Generation throws it when its model call was aborted (routes answer it, or nobody is
 * left to answer); a run's executor throws it to stop between or inside steps and ends the run
 * `cancelled` or `interrupted` as its abort signal says.
 */
export class CancelledError extends AppError {
  constructor(message = 'The request was cancelled.') {
    super('cancelled', message);
    this.name = 'CancelledError';
  }
}
