import { NODE_GITIGNORE, type ProjectTemplate } from './project-template.js';

export const expressApi: ProjectTemplate = {
  id: 'express-api',
  name: 'Express API',
  description: 'A JSON API on Express 5 with a notes resource and tests that start the server on a free port.',
  language: 'javascript',
  files: [
    NODE_GITIGNORE,
    { path: 'package.json', content: `${JSON.stringify({ name: 'express-api', version: '0.1.0', private: true, type: 'module', scripts: { start: 'node src/server.js', test: 'node --test test/' }, dependencies: { express: '^5.0.0' } }, null, 2)}\n` },
    { path: 'README.md', content: '# Express API\n\n```sh\nnpm install\nnpm test\nnpm start   # http://127.0.0.1:3000/notes\n```\n' },
    { path: 'src/app.js', content: `import express from 'express';

export function createApp() {
  const app = express();
  const notes = new Map();
  let nextId = 1;
  app.use(express.json());

  app.get('/notes', (_req, res) => res.json([...notes.values()]));
  app.post('/notes', (req, res) => {
    const text = req.body?.text;
    if (typeof text !== 'string' || text.trim() === '') return res.status(400).json({ error: 'text is required' });
    const note = { id: nextId++, text };
    notes.set(note.id, note);
    res.status(201).json(note);
  });
  app.delete('/notes/:id', (req, res) => (notes.delete(Number(req.params.id)) ? res.status(204).end() : res.status(404).json({ error: 'note not found' })));
  return app;
}
` },
    { path: 'src/server.js', content: `import { createApp } from './app.js';\n\nconst port = Number(process.env.PORT ?? 3000);\ncreateApp().listen(port, '127.0.0.1', () => console.log(\`listening on http://127.0.0.1:\${port}\`));\n` },
    { path: 'test/notes.test.js', content: `import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createApp } from '../src/app.js';

let server;
let base;
before(async () => {
  server = createApp().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = \`http://127.0.0.1:\${server.address().port}\`;
});
after(() => server.close());

test('creates and lists notes', async () => {
  const res = await fetch(\`\${base}/notes\`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hello' }) });
  assert.equal(res.status, 201);
  const list = await (await fetch(\`\${base}/notes\`)).json();
  assert.deepEqual(list.map((n) => n.text), ['hello']);
});

test('rejects an empty note and unknown ids', async () => {
  const res = await fetch(\`\${base}/notes\`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 400);
  assert.equal((await fetch(\`\${base}/notes/999\`, { method: 'DELETE' })).status, 404);
});
` },
  ],
};
