import type { GenerationSpec, SandboxFile } from '../../project-files.js';
import { storeModule, type NodeFlavour } from './names.js';

/**
 * node:test suites for the sandbox model's (deterministic, not AI) Node
 * projects: built into Node, so `npm test` needs nothing installed beyond
 * the project's own dependencies. HTTP variants talk to a real server on a
 * free port, except Fastify, whose inject() is the idiomatic way.
 */
export function nodeTestFile(spec: GenerationSpec, f: NodeFlavour): SandboxFile {
  const E = spec.entity.pascal;
  const t = f.t;
  const field = spec.field;
  const head = [`import { test } from 'node:test';`, `import assert from 'node:assert/strict';`];
  const storeImport = (typed: boolean) => `import { ${E}Store, parse${E}Input${typed ? t(`, type ${E}`) : ''} } from '../src/${storeModule(spec)}.js';`;
  const storeTests = `test('store: create, read, update and remove', () => {
  const store = new ${E}Store();
  const item = store.create({ ${field}: 'first' });
  assert.equal(store.get(item.id)?.${field}, 'first');
  assert.equal(store.update(item.id, { ${field}: 'renamed' })?.${field}, 'renamed');
  assert.deepEqual(store.list().map((i) => i.${field}), ['renamed']);
  assert.equal(store.remove(item.id), true);
  assert.equal(store.get(item.id), undefined);
  assert.equal(store.remove(item.id), false);
});

test('store: hands out copies and keeps ids unique', () => {
  const store = new ${E}Store();
  const a = store.create({ ${field}: 'a' });
  const b = store.create({ ${field}: 'b' });
  assert.notEqual(a.id, b.id);
  a.${field} = 'changed outside';
  assert.equal(store.get(a.id)?.${field}, 'a');
});

test('parse${E}Input: accepts a ${field}, refuses anything else', () => {
  assert.deepEqual(parse${E}Input({ ${field}: '  spaced  ' }), { ${field}: 'spaced' });
  for (const bad of [null, 'text', [], {}, { ${field}: '' }, { ${field}: 42 }, { ${field}: 'x'.repeat(201) }]) {
    assert.equal(typeof parse${E}Input(bad), 'string');
  }
});
`;
  let body: string;
  if (spec.kind === 'cli') {
    head.push(`import { UsageError, run } from '../src/cli.js';`, storeImport(false));
    body = `${storeTests}
test('cli: add, list, rename, show and remove', () => {
  const store = new ${E}Store();
  assert.equal(run(['add', 'buy', 'milk'], store), '1\\tbuy milk');
  assert.equal(run(['add', 'walk'], store), '2\\twalk');
  assert.equal(run(['list'], store), '1\\tbuy milk\\n2\\twalk');
  assert.equal(run(['rename', '1', 'buy', 'bread'], store), '1\\tbuy bread');
  assert.equal(run(['show', '1'], store), '1\\tbuy bread');
  assert.equal(JSON.parse(run(['list', '--json'], store)).length, 2);
  assert.equal(run(['remove', '2'], store), 'removed 2');
});

test('cli: misuse is a UsageError', () => {
  const store = new ${E}Store();
  for (const argv of [[], ['bogus'], ['add'], ['show', 'x'], ['remove', '9']]) {
    assert.throws(() => run(argv, store), UsageError);
  }
});
`;
  } else if (spec.kind === 'api' && spec.framework.includes('fastify')) {
    head.push(`import { buildApp } from '../src/app.js';`, storeImport(true));
    const url = `/${spec.resource.kebab}`;
    body = `${storeTests}
test('api: create, read, update and delete', async () => {
  const app = buildApp();
  const created = await app.inject({ method: 'POST', url: '${url}', payload: { ${field}: 'first' } });
  assert.equal(created.statusCode, 201);
  const item = created.json${t(`<${E}>`)}();
  assert.equal(item.${field}, 'first');
  assert.deepEqual((await app.inject({ url: \`${url}/\${item.id}\` })).json(), item);
  const updated = await app.inject({ method: 'PUT', url: \`${url}/\${item.id}\`, payload: { ${field}: 'renamed' } });
  assert.equal(updated.json${t(`<${E}>`)}().${field}, 'renamed');
  assert.equal((await app.inject({ url: '${url}' })).json${t(`<${E}[]>`)}().length, 1);
  assert.equal((await app.inject({ method: 'DELETE', url: \`${url}/\${item.id}\` })).statusCode, 204);
  assert.equal((await app.inject({ url: \`${url}/\${item.id}\` })).statusCode, 404);
  await app.close();
});

test('api: rejects bad input and unknown ids', async () => {
  const app = buildApp();
  assert.equal((await app.inject({ method: 'POST', url: '${url}', payload: { ${field}: '' } })).statusCode, 400);
  assert.equal((await app.inject({ url: '${url}/999' })).statusCode, 404);
  assert.equal((await app.inject({ url: '${url}/abc' })).statusCode, 400);
  assert.equal((await app.inject({ method: 'DELETE', url: '${url}/999' })).statusCode, 404);
  await app.close();
});
`;
  } else if (spec.kind === 'api') {
    const factory = spec.framework.includes('express') ? 'buildApp' : 'createApp';
    head.push(`import { once } from 'node:events';`, ...(f.ts ? [`import type { AddressInfo } from 'node:net';`] : []), `import { ${factory} } from '../src/app.js';`, storeImport(true));
    body = `${storeTests}
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Starts the app on a free port for one test and stops it afterwards. */
${t('', "/** @param {{ after: (fn: () => void) => void }} t */\n")}async function start(t${t(': { after: (fn: () => void) => void }')})${t(': Promise<string>')} {
  const server = ${factory}().listen(0, '127.0.0.1');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  await once(server, 'listening');
  return \`http://127.0.0.1:\${(server.address()${t(' as AddressInfo')}).port}/${spec.resource.kebab}\`;
}

test('api: create, read, update and delete over HTTP', async (t) => {
  const base = await start(t);
  const created = await fetch(base, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ ${field}: 'first' }) });
  assert.equal(created.status, 201);
  const item = (await created.json())${t(` as ${E}`)};
  assert.equal(item.${field}, 'first');
  assert.deepEqual(await (await fetch(\`\${base}/\${item.id}\`)).json(), item);
  const updated = await fetch(\`\${base}/\${item.id}\`, { method: 'PUT', headers: JSON_HEADERS, body: JSON.stringify({ ${field}: 'renamed' }) });
  assert.equal(((await updated.json())${t(` as ${E}`)}).${field}, 'renamed');
  assert.equal(((await (await fetch(base)).json())${t(` as ${E}[]`)}).length, 1);
  assert.equal((await fetch(\`\${base}/\${item.id}\`, { method: 'DELETE' })).status, 204);
  assert.equal((await fetch(\`\${base}/\${item.id}\`)).status, 404);
});

test('api: rejects bad input and unknown ids', async (t) => {
  const base = await start(t);
  assert.equal((await fetch(base, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ ${field}: '' }) })).status, 400);
  assert.equal((await fetch(base, { method: 'POST', headers: JSON_HEADERS, body: '{not json' })).status, 400);
  assert.equal((await fetch(\`\${base}/999\`)).status, 404);
  assert.equal((await fetch(\`\${base}/999\`, { method: 'DELETE' })).status, 404);
});
`;
  } else {
    head.push(`import { ${E}Store as Exported } from '../src/index.js';`, storeImport(false));
    body = `${storeTests}
test('index: exports the store', () => {
  assert.equal(Exported, ${E}Store);
});
`;
  }
  return { path: `test/${spec.resource.kebab}.test.${f.ext}`, lang: f.lang, content: `${head.join('\n')}\n\n${body}` };
}
