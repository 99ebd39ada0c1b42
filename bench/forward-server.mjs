// The forwarding itself (issue 13's second yardstick): a Fastify route that takes the same JSON body as
// POST /api/v1/generate, streams the same request to the upstream over a keep-alive undici Pool, gathers
// the SSE text and answers JSON. No auth, limits, storage, validation or logging: what Codeloom's
// /generate costs beyond this is its own per-request work.
import Fastify from 'fastify';
import { Pool } from 'undici';

const upstream = new URL(process.env.UPSTREAM_URL);
const pool = new Pool(upstream.origin, { connections: 128, pipelining: 1 });
const app = Fastify({ logger: false });
app.post('/generate', async (request) => {
  const { prompt, model, language } = request.body;
  const { statusCode, body } = await pool.request({
    method: 'POST', path: `${upstream.pathname.replace(/\/$/, '')}/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench', accept: 'text/event-stream' },
    body: JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages: [
      { role: 'system', content: `You write ${language} code.` }, { role: 'user', content: prompt },
    ] }),
  });
  const text = await body.text();
  if (statusCode !== 200) throw new Error(`upstream ${statusCode}`);
  let code = '';
  let usage;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice(6));
    code += chunk.choices?.[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  return { code, usage };
});
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`listening on ${address}`);
process.on('SIGTERM', () => app.close().then(() => pool.close()).then(() => process.exit(0)));
