import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ChangePasswordBodySchema, PasswordResetAcceptedSchema, PasswordResetBodySchema, PasswordResetConfirmBodySchema, SuccessSchema } from '@codeloom/protocol';
import { errorResponses } from '../../plugins/openapi.js';
import { RESET_ACCEPTED, type PasswordService } from './password-service.js';

const tags = ['Authentication'];

/** Passwords (CONTRACT §12.5, docs/api.md "Passwords"): change, and reset by an emailed link. */
export const passwordRoutes = ({ passwords }: { passwords: PasswordService }): FastifyPluginAsync => async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/auth/password', {
    config: { auth: 'any', sessionOnly: true },
    schema: {
      tags, summary: 'Change the password (every other session of the account ends; this one stays signed in)',
      description: 'Needs a session token. A wrong `current_password` is 401 `invalid_credentials` and counts against the login throttle (429 after repeated failures).',
      security: [{ bearer: [] }], body: ChangePasswordBodySchema, response: { 200: SuccessSchema, ...errorResponses(400, 401, 403, 413, 415, 429) },
    },
  }, async (request) => {
    await passwords.change(request.principal!, request.body, request.ip);
    return { success: true };
  });

  app.post('/auth/password-reset', {
    schema: {
      tags, summary: 'Ask for a password reset link by email (202 for every address, known or not)',
      description: 'The link is emailed when the server has a mail server (CODELOOM_SMTP_URL); it works once, for CODELOOM_PASSWORD_RESET_TTL seconds. Requests are throttled per email and per client address (429 with Retry-After).',
      body: PasswordResetBodySchema, response: { 202: PasswordResetAcceptedSchema, ...errorResponses(400, 413, 415, 429) },
    },
  }, async (request, reply) => {
    await passwords.requestReset(request.body.email, request.ip);
    return reply.code(202).send(RESET_ACCEPTED);
  });

  app.post('/auth/password-reset/confirm', {
    schema: {
      tags, summary: 'Set a new password with the token of a reset link (every session of the account ends)',
      description: 'A token that is unknown, expired or already used is 400 `invalid_reset_token`.',
      body: PasswordResetConfirmBodySchema, response: { 200: SuccessSchema, ...errorResponses(400, 413, 415, 429) },
    },
  }, async (request) => {
    await passwords.confirmReset(request.body);
    return { success: true };
  });
};
