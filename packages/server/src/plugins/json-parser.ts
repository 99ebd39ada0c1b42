import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from '../errors.js';

/**
 * JSON bodies with prototype-poisoning protection; an empty body (a bare
 * POST with Content-Type: application/json, as many clients send on
 * logout) is read as no body instead of failing. Every other media type is
 * refused with 415.
 */
export function registerJsonParser(app: FastifyInstance) {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(\s*;.*)?$/i, { parseAs: 'string', bodyLimit: app.initialConfig.bodyLimit }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }));
    } catch {
      done(new AppError('malformed_json', 'The request body is not valid JSON.'), undefined);
    }
  });
}
