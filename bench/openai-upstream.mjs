// A minimal OpenAI-compatible upstream that answers at once (the benchmark's "model"):
// POST /v1/chat/completions, streamed (SSE with a usage chunk) or JSON.
import { createServer } from 'node:http';

const REPLY = ['```ts', ' src/hello.ts\n', 'export const hello = () => "hi";\n', '```\n'];
const chunk = (delta) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'bench', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
const STREAM = [
  chunk({ role: 'assistant', content: '' }),
  ...REPLY.map((content) => chunk({ content })),
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'bench', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'bench', choices: [], usage: { prompt_tokens: 12, completion_tokens: REPLY.length, total_tokens: 12 + REPLY.length } })}\n\n`,
  'data: [DONE]\n\n',
].join('');
const JSON_BODY = JSON.stringify({ id: 'c1', object: 'chat.completion', created: 0, model: 'bench', choices: [{ index: 0, message: { role: 'assistant', content: REPLY.join('') }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } });

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    const stream = body.includes('"stream":true');
    res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
    res.end(stream ? STREAM : JSON_BODY);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
