import { NODE_GITIGNORE, type ProjectTemplate } from './project-template.js';

export const fastifyApi: ProjectTemplate = {
  id: 'fastify-api',
  name: 'Fastify API',
  description: 'A JSON API on Fastify 5 with a todos resource, schema validation and tests (node:test + inject).',
  language: 'javascript',
  files: [
    NODE_GITIGNORE,
    { path: 'package.json', content: `${JSON.stringify({ name: 'fastify-api', version: '0.1.0', private: true, type: 'module', scripts: { start: 'node src/server.js', test: 'node --test test/' }, dependencies: { fastify: '^5.0.0' } }, null, 2)}\n` },
    { path: 'README.md', content: '# Fastify API\n\n```sh\nnpm install\nnpm test\nnpm start   # http://127.0.0.1:3000/todos\n```\n' },
    { path: 'src/app.js', content: `import Fastify from 'fastify';

const todoBody = { type: 'object', required: ['title'], additionalProperties: false, properties: { title: { type: 'string', minLength: 1, maxLength: 200 }, done: { type: 'boolean' } } };

export function buildApp(opts = {}) {
  const app = Fastify(opts);
  const todos = new Map();
  let nextId = 1;

  app.get('/todos', async () => [...todos.values()]);
  app.get('/todos/:id', async (request, reply) => todos.get(Number(request.params.id)) ?? reply.code(404).send({ error: 'todo not found' }));
  app.post('/todos', { schema: { body: todoBody } }, async (request, reply) => {
    const todo = { id: nextId++, title: request.body.title, done: request.body.done ?? false };
    todos.set(todo.id, todo);
    return reply.code(201).send(todo);
  });
  app.delete('/todos/:id', async (request, reply) => (todos.delete(Number(request.params.id)) ? reply.code(204).send() : reply.code(404).send({ error: 'todo not found' })));
  return app;
}
` },
    { path: 'src/server.js', content: `import { buildApp } from './app.js';\n\nconst app = buildApp({ logger: true });\nawait app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3000) });\n` },
    { path: 'test/todos.test.js', content: `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../src/app.js';

test('creates, lists, reads and deletes todos', async () => {
  const app = buildApp();
  const created = await app.inject({ method: 'POST', url: '/todos', payload: { title: 'write tests' } });
  assert.equal(created.statusCode, 201);
  const todo = created.json();
  assert.deepEqual((await app.inject('/todos')).json(), [todo]);
  assert.equal((await app.inject(\`/todos/\${todo.id}\`)).json().title, 'write tests');
  assert.equal((await app.inject({ method: 'DELETE', url: \`/todos/\${todo.id}\` })).statusCode, 204);
  assert.equal((await app.inject(\`/todos/\${todo.id}\`)).statusCode, 404);
});

test('rejects a todo without a title', async () => {
  const res = await buildApp().inject({ method: 'POST', url: '/todos', payload: {} });
  assert.equal(res.statusCode, 400);
});
` },
  ],
};
