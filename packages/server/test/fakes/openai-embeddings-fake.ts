/**
 * A fake OpenAI-compatible embeddings endpoint, `POST /v1/embeddings`, answering exactly as OpenAI does:
 * `{"object": "list", "data": [{"object": "embedding", "index", "embedding": [floats]}], "model", "usage":
 * {"prompt_tokens", "total_tokens"}}` (base64 vectors when asked), errors as `{"error": {message, type, param,
 * code}}`. It counts one token per whitespace-separated word (or token id) and makes each vector from its
 * input's length and position, so a test can tell which vector is which.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EmbeddingsFake {
  url: string;
  requests: Array<{ headers: IncomingHttpHeaders; body: any }>;
  /** The next `count` requests fail with this status. */
  failNext(count: number, status: number): void;
  close(): Promise<void>;
}

export async function startEmbeddingsFake(dimensions = 8): Promise<EmbeddingsFake> {
  const requests: EmbeddingsFake['requests'] = [];
  let failing = { count: 0, status: 500 };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      requests.push({ headers: req.headers, body });
      const send = (status: number, json: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (req.url !== '/v1/embeddings' || req.method !== 'POST') return send(404, { error: { message: `no route ${req.url}`, type: 'invalid_request_error', param: null, code: null } });
      if (failing.count > 0) {
        failing.count--;
        return send(failing.status, { error: { message: `scripted failure (HTTP ${failing.status})`, type: failing.status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } });
      }
      const inputs: Array<string | number[]> = typeof body.input === 'string' || typeof body.input?.[0] === 'number' ? [body.input] : body.input;
      const dims = body.dimensions ?? dimensions;
      let tokens = 0;
      const data = inputs.map((input, index) => {
        const n = typeof input === 'string' ? input.split(/\s+/).filter(Boolean).length : input.length;
        tokens += n;
        const vector = Array.from({ length: dims }, (_, d) => (d === 0 ? index : d === 1 ? n : 1 / (d + 1)));
        const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      });
      send(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    failNext(count, status) { failing = { count, status }; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
