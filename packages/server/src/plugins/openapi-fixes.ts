/**
 * What @fastify/swagger cannot say from the route schemas alone, set right in the generated document
 * (issue 24 item 5): problem documents are `application/problem+json` (the OpenAI- and Anthropic-compatible
 * routes keep their vendors' `application/json` errors); streaming routes also answer `text/event-stream`;
 * a wildcard file path is a parameter named `path`, not a literal `{*}` that generated clients would send.
 */

/** Routes whose 200 is also a stream of Server-Sent Events (when the body asks for `stream: true`). */
const SSE_ROUTES: Record<string, string> = {
  'post /api/v1/generate': 'With `"stream": true`: `token` events, then `complete` (the same object as the JSON answer) or `error` (docs/streaming.md).',
  'post /openai/v1/chat/completions': 'With `"stream": true`: `chat.completion.chunk` objects as OpenAI sends them, then `data: [DONE]`.',
  'post /openai/v1/completions': 'With `"stream": true`: `text_completion` chunks as OpenAI sends them, then `data: [DONE]`.',
  'post /openai/v1/responses': 'With `"stream": true`: the Responses API events (`response.created`, `response.output_text.delta`, …, `response.completed`).',
  'post /anthropic/v1/messages': 'With `"stream": true`: the Messages API events (`message_start` … `message_stop`).',
};

const VENDOR_PREFIXES = ['/openai/', '/anthropic/'];
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function fixOpenApi(doc: Json): Json {
  const paths: Json = {};
  for (const [rawPath, item] of Object.entries(doc.paths ?? {}) as Array<[string, Json]>) {
    const path = rawPath.replace(/\{\*\}/g, '{path}');
    paths[path] = item;
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in === 'path' && p.name === '*') Object.assign(p, { name: 'path', required: true, description: p.description ?? 'A file path inside the project, e.g. `src/app.js`: its slashes may be sent as they are or encoded as %2F.', schema: p.schema ?? { type: 'string' } });
      }
      const vendor = VENDOR_PREFIXES.some((prefix) => path.startsWith(prefix));
      for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, Json]>) {
        if (vendor || Number(status) < 400 || !response.content?.['application/json']) continue;
        response.content = { 'application/problem+json': response.content['application/json'] };
      }
      const sse = SSE_ROUTES[`${method} ${path}`];
      const ok = op.responses?.['200'] as Json | undefined;
      if (sse && ok?.content && !ok.content['text/event-stream']) {
        ok.content['text/event-stream'] = { schema: { type: 'string', description: sse } };
        ok.description = ok.description === 'Default Response' ? 'The answer as JSON, or a stream of Server-Sent Events' : ok.description;
      }
    }
  }
  doc.paths = paths;
  return doc;
}
