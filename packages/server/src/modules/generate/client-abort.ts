import type { FastifyReply } from 'fastify';
import { AppError, CancelledError } from '../../errors.js';

/**
 * Runs a non-streamed model call with a signal that aborts it when the client closes the connection before its
 * answer is written (the upstream call is cancelled, not left running). A call cancelled that way is a 503:
 * nobody is left to read it, and it is not the caller's fault.
 */
export async function whileClientConnected<T>(reply: FastifyReply, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const onClose = () => { if (!reply.raw.writableFinished) abort.abort(); };
  reply.raw.on('close', onClose);
  try {
    return await call(abort.signal);
  } catch (error) {
    if (error instanceof CancelledError) throw new AppError('service_unavailable', 'The client closed the connection.');
    throw error;
  } finally {
    reply.raw.off('close', onClose);
  }
}
