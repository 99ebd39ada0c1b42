import { jsonFile, NODE_GITIGNORE, type ProjectTemplate } from './project-template.js';

const README = `# Fastify API

A small JSON API on [Fastify 5](https://fastify.dev) with an in-memory todos
resource, JSON-schema validation and tests that need no running server.

## Run

\`\`\`sh
npm install
npm test          # node:test + fastify.inject
npm start         # http://127.0.0.1:3000/todos (PORT and HOST override)
npm run dev       # restarts on file changes
\`\`\`

## Endpoints

| Method | Path         | Body                                 | Answer                    |
| ------ | ------------ | ------------------------------------ | ------------------------- |
| GET    | /health      |                                      | 200 \`{ "status": "ok" }\`  |
| GET    | /todos       |                                      | 200 list of todos         |
| POST   | /todos       | \`{ "title": string, "done"?: bool }\` | 201 the new todo          |
| GET    | /todos/:id   |                                      | 200 the todo, or 404      |
| PATCH  | /todos/:id   | \`{ "title"?: string, "done"?: bool }\`| 200 the todo, or 404      |
| DELETE | /todos/:id   |                                      | 204, or 404               |

Invalid bodies get a 400 from Fastify's schema validation.

## Layout

- \`src/app.js\`: builds the app (no listening), so tests can \`inject\` requests.
- \`src/server.js\`: starts it.
- \`test/\`: tests run by \`node --test\`.
`;

const APP = `import Fastify from 'fastify';

const title = { type: 'string', minLength: 1, maxLength: 200 };
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } };
const createBody = { type: 'object', required: ['title'], additionalProperties: false, properties: { title, done: { type: 'boolean' } } };
const updateBody = { type: 'object', minProperties: 1, additionalProperties: false, properties: { title, done: { type: 'boolean' } } };

export function buildApp(opts = {}) {
  const app = Fastify(opts);
  // In memory on purpose: swap this Map for a database when the API outgrows a demo.
  const todos = new Map();
  let nextId = 1;
  const notFound = (reply) => reply.code(404).send({ error: 'todo not found' });

  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/todos', async () => [...todos.values()]);

  app.post('/todos', { schema: { body: createBody } }, async (request, reply) => {
    const todo = { id: nextId++, title: request.body.title, done: request.body.done ?? false };
    todos.set(todo.id, todo);
    return reply.code(201).send(todo);
  });

  app.get('/todos/:id', { schema: { params: idParams } }, async (request, reply) => {
    return todos.get(request.params.id) ?? notFound(reply);
  });

  app.patch('/todos/:id', { schema: { params: idParams, body: updateBody } }, async (request, reply) => {
    const todo = todos.get(request.params.id);
    if (!todo) return notFound(reply);
    Object.assign(todo, request.body);
    return todo;
  });

  app.delete('/todos/:id', { schema: { params: idParams } }, async (request, reply) => {
    return todos.delete(request.params.id) ? reply.code(204).send() : notFound(reply);
  });

  return app;
}
`;

const SERVER = `import { buildApp } from './app.js';

const app = buildApp({ logger: true });

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await app.close();
    process.exit(0);
  });
}

try {
  await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3000) });
} catch (err) {
  app.log.error(err);
  process.exit(1);
}
`;

const TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../src/app.js';

function setup(t) {
  const app = buildApp();
  t.after(() => app.close());
  return app;
}

test('creates, lists, updates and deletes todos', async (t) => {
  const app = setup(t);
  const created = await app.inject({ method: 'POST', url: '/todos', payload: { title: 'write tests' } });
  assert.equal(created.statusCode, 201);
  const todo = created.json();
  assert.deepEqual(todo, { id: 1, title: 'write tests', done: false });
  assert.deepEqual((await app.inject('/todos')).json(), [todo]);

  const updated = await app.inject({ method: 'PATCH', url: \`/todos/\${todo.id}\`, payload: { done: true } });
  assert.equal(updated.statusCode, 200);
  assert.equal(updated.json().done, true);
  assert.equal((await app.inject(\`/todos/\${todo.id}\`)).json().done, true);

  assert.equal((await app.inject({ method: 'DELETE', url: \`/todos/\${todo.id}\` })).statusCode, 204);
  assert.equal((await app.inject(\`/todos/\${todo.id}\`)).statusCode, 404);
});

test('validates bodies and ids', async (t) => {
  const app = setup(t);
  assert.equal((await app.inject({ method: 'POST', url: '/todos', payload: {} })).statusCode, 400);
  assert.equal((await app.inject({ method: 'POST', url: '/todos', payload: { title: '' } })).statusCode, 400);
  assert.equal((await app.inject({ method: 'PATCH', url: '/todos/1', payload: {} })).statusCode, 400);
  assert.equal((await app.inject('/todos/abc')).statusCode, 400);
  assert.equal((await app.inject('/todos/42')).statusCode, 404);
});

test('reports health', async (t) => {
  const res = await setup(t).inject('/health');
  assert.deepEqual(res.json(), { status: 'ok' });
});
`;

export const fastifyApi: ProjectTemplate = {
  id: 'fastify-api',
  name: 'Fastify API',
  description: 'A JSON API on Fastify 5 (plain JavaScript ESM, no build step) with a todos resource, schema validation and node:test tests using inject.',
  language: 'javascript',
  files: [
    NODE_GITIGNORE,
    jsonFile('package.json', {
      name: 'fastify-api',
      version: '0.1.0',
      private: true,
      type: 'module',
      engines: { node: '>=20' },
      scripts: { start: 'node src/server.js', dev: 'node --watch src/server.js', test: 'node --test test/*.test.js' },
      dependencies: { fastify: '^5.2.0' },
    }),
    { path: 'README.md', content: README },
    { path: 'src/app.js', content: APP },
    { path: 'src/server.js', content: SERVER },
    { path: 'test/todos.test.js', content: TEST },
  ],
};
