import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { storeModule, type NodeFlavour } from './names.js';

/**
 * The HTTP layer of the sandbox model's (deterministic, not AI) Node
 * projects, in the idiom of the framework asked for: a Fastify route plugin,
 * an Express router, or plain node:http so it runs with nothing installed.
 * Every variant splits the app (importable by tests) from the listening entry.
 */
export function nodeApiFiles(spec: GenerationSpec, f: NodeFlavour): SandboxFile[] {
  const server = (factory: string) => ({
    path: `src/server.${f.ext}`, lang: f.lang,
    content: `import { ${factory} } from './app.js';

const port = Number(process.env.PORT ?? 3000);
${factory === 'buildApp' && spec.framework.includes('fastify')
      ? `const app = buildApp({ logger: true });
app.listen({ port, host: '0.0.0.0' }).catch((error${f.t(': unknown')}) => {
  app.log.error(error);
  process.exit(1);
});`
      : `${factory}().listen(port, () => console.log(\`listening on http://localhost:\${port}/${spec.resource.kebab}\`));`}
`,
  });
  if (spec.framework.includes('fastify')) return [...fastifyFiles(spec, f), server('buildApp')];
  if (spec.framework.includes('express')) return [...expressFiles(spec, f), server('buildApp')];
  return [httpApp(spec, f), server('createApp')];
}

function httpApp(spec: GenerationSpec, f: NodeFlavour): SandboxFile {
  const E = spec.entity.pascal;
  const t = f.t;
  const notFound = `{ error: '${spec.entity.words} not found' }`;
  return {
    path: `src/app.${f.ext}`, lang: f.lang,
    content: `import { createServer${t(', type IncomingMessage, type Server, type ServerResponse')} } from 'node:http';
import { ${E}Store, parse${E}Input } from './${storeModule(spec)}.js';

${t('', '/**\n * @param {import(\'node:http\').ServerResponse} res\n * @param {number} status\n * @param {unknown} [body]\n */\n')}function send(res${t(': ServerResponse')}, status${t(': number')}, body${t('?: unknown')})${t(': void')} {
  res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' });
  res.end(body === undefined ? '' : JSON.stringify(body));
}

/** The parsed JSON body, or undefined when it is not JSON or larger than 1 MB. */
async function readJson(req${t(': IncomingMessage')})${t(': Promise<unknown>')} {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 1_000_000) return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** /${spec.resource.kebab} and /${spec.resource.kebab}/:id; other paths are 404, other methods 405. */
async function route(store${t(`: ${E}Store`)}, req${t(': IncomingMessage')}, res${t(': ServerResponse')})${t(': Promise<void>')} {
  const { pathname } = new URL(req.url ?? '/', 'http://localhost');
  const match = /^\\/${spec.resource.kebab}(?:\\/(\\d+))?\\/?$/.exec(pathname);
  if (!match) return send(res, 404, { error: 'not found' });
  const id = match[1] === undefined ? undefined : Number(match[1]);
  if (id === undefined && req.method === 'GET') return send(res, 200, store.list());
  if (id === undefined && req.method === 'POST') {
    const input = parse${E}Input(await readJson(req));
    return typeof input === 'string' ? send(res, 400, { error: input }) : send(res, 201, store.create(input));
  }
  if (id !== undefined && req.method === 'GET') {
    const item = store.get(id);
    return item ? send(res, 200, item) : send(res, 404, ${notFound});
  }
  if (id !== undefined && req.method === 'PUT') {
    const input = parse${E}Input(await readJson(req));
    if (typeof input === 'string') return send(res, 400, { error: input });
    const item = store.update(id, input);
    return item ? send(res, 200, item) : send(res, 404, ${notFound});
  }
  if (id !== undefined && req.method === 'DELETE') return store.remove(id) ? send(res, 204) : send(res, 404, ${notFound});
  send(res, 405, { error: 'method not allowed' });
}

/** A dependency-free JSON API for ${spec.resource.words}; call listen() on the result. */
export function createApp(store = new ${E}Store())${t(': Server')} {
  return createServer((req, res) => {
    route(store, req, res).catch(() => send(res, 500, { error: 'internal error' }));
  });
}
`,
  };
}

function fastifyFiles(spec: GenerationSpec, f: NodeFlavour): SandboxFile[] {
  const E = spec.entity.pascal;
  const R = spec.resource.camel;
  const path = `/${spec.resource.kebab}`;
  const t = f.t;
  const P = t('<{ Params: { id: number } }>');
  const notFound = `{ error: '${spec.entity.words} not found' }`;
  return [{
    path: `src/routes/${spec.resource.kebab}.${f.ext}`, lang: f.lang,
    content: `${t(`import type { FastifyPluginAsync } from 'fastify';\n`)}import { ${E}Store, parse${E}Input } from '../${storeModule(spec)}.js';

${t(`export interface ${spec.resource.pascal}RoutesOptions {\n  store?: ${E}Store;\n}\n\n`)}/** Fastify plugin with the ${spec.resource.words} CRUD routes; the schema makes Fastify reject and coerce bad ids. */
${t('', `/** @type {import('fastify').FastifyPluginAsync<{ store?: ${E}Store }>} */\n`)}export const ${R}Routes${t(`: FastifyPluginAsync<${spec.resource.pascal}RoutesOptions>`)} = async (app, opts) => {
  const store = opts.store ?? new ${E}Store();
  const params = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } }${t(' as const')};

  app.get('${path}', async () => store.list());

  app.get${P}('${path}/:id', { schema: { params } }, async (request, reply) => {
    const item = store.get(request.params.id);
    return item ?? reply.code(404).send(${notFound});
  });

  app.post('${path}', async (request, reply) => {
    const input = parse${E}Input(request.body);
    if (typeof input === 'string') return reply.code(400).send({ error: input });
    return reply.code(201).send(store.create(input));
  });

  app.put${P}('${path}/:id', { schema: { params } }, async (request, reply) => {
    const input = parse${E}Input(request.body);
    if (typeof input === 'string') return reply.code(400).send({ error: input });
    return store.update(request.params.id, input) ?? reply.code(404).send(${notFound});
  });

  app.delete${P}('${path}/:id', { schema: { params } }, async (request, reply) => {
    if (!store.remove(request.params.id)) return reply.code(404).send(${notFound});
    return reply.code(204).send();
  });
};
`,
  }, {
    path: `src/app.${f.ext}`, lang: f.lang,
    content: `import Fastify${t(', { type FastifyServerOptions }')} from 'fastify';
import { ${R}Routes } from './routes/${spec.resource.kebab}.js';
import { ${E}Store } from './${storeModule(spec)}.js';

/** Builds the app without listening, so tests can use app.inject(). */
${t('', `/**\n * @param {import('fastify').FastifyServerOptions} [options]\n * @param {${E}Store} [store]\n */\n`)}export function buildApp(options${t(': FastifyServerOptions')} = {}, store = new ${E}Store()) {
  const app = Fastify(options);
  app.register(${R}Routes, { store });
  return app;
}
`,
  }];
}

function expressFiles(spec: GenerationSpec, f: NodeFlavour): SandboxFile[] {
  const E = spec.entity.pascal;
  const R = spec.resource.camel;
  const t = f.t;
  const req = t(': Request');
  const res = t(': Response');
  const notFound = `{ error: '${spec.entity.words} not found' }`;
  return [{
    path: `src/routes/${spec.resource.kebab}.${f.ext}`, lang: f.lang,
    content: `import { Router${t(', type Request, type Response')} } from 'express';
import { ${E}Store, parse${E}Input } from '../${storeModule(spec)}.js';

/** Express router with the ${spec.resource.words} CRUD routes; mount it at /${spec.resource.kebab}. */
export function ${R}Router(store = new ${E}Store())${t(': Router')} {
  const router = Router();

  router.get('/', (_req${req}, res${res}) => {
    res.json(store.list());
  });

  router.get('/:id', (req${req}, res${res}) => {
    const item = store.get(Number(req.params.id));
    if (item) res.json(item);
    else res.status(404).json(${notFound});
  });

  router.post('/', (req${req}, res${res}) => {
    const input = parse${E}Input(req.body);
    if (typeof input === 'string') res.status(400).json({ error: input });
    else res.status(201).json(store.create(input));
  });

  router.put('/:id', (req${req}, res${res}) => {
    const input = parse${E}Input(req.body);
    if (typeof input === 'string') {
      res.status(400).json({ error: input });
      return;
    }
    const item = store.update(Number(req.params.id), input);
    if (item) res.json(item);
    else res.status(404).json(${notFound});
  });

  router.delete('/:id', (req${req}, res${res}) => {
    if (store.remove(Number(req.params.id))) res.status(204).end();
    else res.status(404).json(${notFound});
  });

  return router;
}
`,
  }, {
    path: `src/app.${f.ext}`, lang: f.lang,
    content: `import express${t(', { type Express, type NextFunction, type Request, type Response }')} from 'express';
import { ${R}Router } from './routes/${spec.resource.kebab}.js';
import { ${E}Store } from './${storeModule(spec)}.js';

/** Builds the app without listening, so tests can listen on a free port. */
export function buildApp(store = new ${E}Store())${t(': Express')} {
  const app = express();
  app.use(express.json());
  app.use('/${spec.resource.kebab}', ${R}Router(store));
  app.use((_req${req}, res${res}) => {
    res.status(404).json({ error: 'not found' });
  });
  // Four parameters make this Express's error handler (a malformed JSON body lands here as a 400).
  app.use((error${t(': { status?: number }')}, _req${req}, res${res}, _next${t(': NextFunction')}) => {
    const status = error.status ?? 500;
    res.status(status).json({ error: status === 400 ? 'invalid JSON body' : 'internal error' });
  });
  return app;
}
`,
  }];
}
