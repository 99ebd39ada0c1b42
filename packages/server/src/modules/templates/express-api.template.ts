import { jsonFile, NODE_GITIGNORE, type ProjectTemplate } from './project-template.js';

const README = `# Express API

A small JSON API on [Express 5](https://expressjs.com) with an in-memory notes
resource. The tests start the real server on a free port and talk to it with
\`fetch\`, so no test-only HTTP library is needed.

## Run

\`\`\`sh
npm install
npm test          # node:test, server on port 0
npm start         # http://127.0.0.1:3000/notes (PORT and HOST override)
npm run dev       # restarts on file changes
\`\`\`

## Endpoints

| Method | Path        | Body                 | Answer                   |
| ------ | ----------- | -------------------- | ------------------------ |
| GET    | /health     |                      | 200 \`{ "status": "ok" }\` |
| GET    | /notes      |                      | 200 list of notes        |
| POST   | /notes      | \`{ "text": string }\` | 201 the new note, or 400 |
| GET    | /notes/:id  |                      | 200 the note, or 404     |
| DELETE | /notes/:id  |                      | 204, or 404              |

Unknown routes answer 404 and malformed JSON answers 400, both as JSON.

## Layout

- \`src/app.js\`: builds the app without listening.
- \`src/server.js\`: starts it.
- \`test/\`: tests run by \`node --test\`.
`;

const APP = `import express from 'express';

export function createApp() {
  const app = express();
  // In memory on purpose: swap this Map for a database when the API outgrows a demo.
  const notes = new Map();
  let nextId = 1;

  app.use(express.json({ limit: '100kb' }));

  app.get('/health', (_req, res) => res.json({ status: 'ok' }));

  app.get('/notes', (_req, res) => res.json([...notes.values()]));

  app.post('/notes', (req, res) => {
    const text = req.body?.text;
    if (typeof text !== 'string' || text.trim() === '') return res.status(400).json({ error: 'text is required' });
    const note = { id: nextId++, text: text.trim() };
    notes.set(note.id, note);
    res.status(201).json(note);
  });

  app.get('/notes/:id', (req, res) => {
    const note = notes.get(Number(req.params.id));
    return note ? res.json(note) : res.status(404).json({ error: 'note not found' });
  });

  app.delete('/notes/:id', (req, res) => {
    return notes.delete(Number(req.params.id)) ? res.status(204).end() : res.status(404).json({ error: 'note not found' });
  });

  app.use((_req, res) => res.status(404).json({ error: 'not found' }));

  // Express recognises an error handler by its four parameters, so next stays even though it is unused.
  app.use((err, _req, res, _next) => {
    const status = err.status ?? err.statusCode ?? 500;
    res.status(status).json({ error: status === 500 ? 'internal error' : err.message });
  });

  return app;
}
`;

const SERVER = `import { createApp } from './app.js';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);

const server = createApp().listen(port, host, () => console.log(\`listening on http://\${host}:\${port}\`));

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
`;

const TEST = `import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createApp } from '../src/app.js';

let server;
let base;

before(async () => {
  // Port 0 lets the OS pick a free port, so tests never clash with a running server.
  server = createApp().listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = \`http://127.0.0.1:\${server.address().port}\`;
});

after(() => new Promise((resolve) => server.close(resolve)));

const post = (path, body) => fetch(\`\${base}\${path}\`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

test('creates, reads, lists and deletes notes', async () => {
  const res = await post('/notes', JSON.stringify({ text: ' hello ' }));
  assert.equal(res.status, 201);
  const note = await res.json();
  assert.deepEqual(note, { id: 1, text: 'hello' });
  assert.deepEqual(await (await fetch(\`\${base}/notes/1\`)).json(), note);
  assert.deepEqual(await (await fetch(\`\${base}/notes\`)).json(), [note]);
  assert.equal((await fetch(\`\${base}/notes/1\`, { method: 'DELETE' })).status, 204);
  assert.equal((await fetch(\`\${base}/notes/1\`)).status, 404);
});

test('rejects empty notes and malformed JSON', async () => {
  assert.equal((await post('/notes', '{}')).status, 400);
  assert.equal((await post('/notes', JSON.stringify({ text: '   ' }))).status, 400);
  const bad = await post('/notes', '{"text":');
  assert.equal(bad.status, 400);
  assert.ok((await bad.json()).error);
});

test('answers unknown routes and ids with 404', async () => {
  assert.equal((await fetch(\`\${base}/nowhere\`)).status, 404);
  assert.equal((await fetch(\`\${base}/notes/999\`, { method: 'DELETE' })).status, 404);
  assert.deepEqual(await (await fetch(\`\${base}/health\`)).json(), { status: 'ok' });
});
`;

export const expressApi: ProjectTemplate = {
  id: 'express-api',
  name: 'Express API',
  description: 'A JSON API on Express 5 (plain JavaScript ESM) with a notes resource and node:test tests that start the server on a free port and use fetch.',
  language: 'javascript',
  files: [
    NODE_GITIGNORE,
    jsonFile('package.json', {
      name: 'express-api',
      version: '0.1.0',
      private: true,
      type: 'module',
      engines: { node: '>=20' },
      scripts: { start: 'node src/server.js', dev: 'node --watch src/server.js', test: 'node --test test/*.test.js' },
      dependencies: { express: '^5.1.0' },
    }),
    { path: 'README.md', content: README },
    { path: 'src/app.js', content: APP },
    { path: 'src/server.js', content: SERVER },
    { path: 'test/notes.test.js', content: TEST },
  ],
};
