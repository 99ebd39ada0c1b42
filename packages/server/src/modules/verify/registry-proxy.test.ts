/**
 * The install phase's registry proxy over its real Unix socket, against a fake npm registry on loopback (a
 * packument and a tarball in the registry's wire format, under a path prefix like a mirror's `/npm/`) and
 * an "elsewhere" server that must never be reached: only GET and HEAD, only under the registry's path, no
 * redirect off the registry, no client credentials forwarded, a download budget and a wall time, and the
 * socket gone on close. Then npm itself (the host's) installs through it with the sandbox's npm settings,
 * over a TCP-to-socket relay like the sandbox driver's.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxNpmEnv } from './install-phase.js';
import { startRegistryProxy, upstreamPath, type RegistryProxy } from './registry-proxy.js';

interface Seen { method: string; url: string; headers: IncomingHttpHeaders }

const listen = async (server: Server | NetServer) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
};
const closeServer = (server: Server | NetServer) => new Promise<void>((resolve) => server.close(() => resolve()));

/** One raw HTTP/1.1 exchange over the Unix socket: the request target goes out exactly as written (no half-close: Node's server drops a request whose client ends its side). */
function raw(socketPath: string, method: string, target: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      let body = split < 0 ? '' : text.slice(split + 4);
      if (/^transfer-encoding: chunked$/im.test(head)) {
        let plain = '';
        for (let at = 0; ;) {
          const eol = body.indexOf('\r\n', at);
          const size = eol < 0 ? 0 : parseInt(body.slice(at, eol), 16);
          if (!size) break;
          plain += body.slice(eol + 2, eol + 2 + size);
          at = eol + 2 + size + 2;
        }
        body = plain;
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), headers: head.toLowerCase(), body });
    });
    const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1:4873', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

describe('the registry proxy', () => {
  let registry: Server;
  let elsewhere: Server;
  let registryUrl = '';
  let elsewhereUrl = '';
  let work = '';
  let tgz = Buffer.alloc(0);
  const seen: Seen[] = [];
  const elsewhereSeen: Seen[] = [];
  let proxy: RegistryProxy;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'codeloom-proxy-test-'));
    mkdirSync(join(work, 'package'));
    writeFileSync(join(work, 'package/package.json'), JSON.stringify({ name: 'shout-lite', version: '1.0.0', main: 'index.js' }));
    writeFileSync(join(work, 'package/index.js'), "module.exports = (s) => s.toUpperCase() + '!';\n");
    execFileSync('tar', ['czf', join(work, 'shout.tgz'), '-C', work, 'package']);
    tgz = readFileSync(join(work, 'shout.tgz'));

    elsewhere = createHttpServer((req, res) => { elsewhereSeen.push({ method: req.method!, url: req.url!, headers: req.headers }); res.end('you reached elsewhere'); });
    elsewhereUrl = `http://127.0.0.1:${await listen(elsewhere)}`;

    registry = createHttpServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      const url = req.url ?? '';
      if (url === '/npm/shout-lite') {
        // The registry's own absolute tarball URL, as registry.npmjs.org and mirrors write it.
        res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive, x-hop', 'x-hop': 'secret', 'set-cookie': 'sid=1' }).end(JSON.stringify({
          name: 'shout-lite', 'dist-tags': { latest: '1.0.0' },
          versions: { '1.0.0': { name: 'shout-lite', version: '1.0.0', main: 'index.js', dist: {
            tarball: `${registryUrl}/npm/shout-lite/-/shout-lite-1.0.0.tgz`,
            shasum: createHash('sha1').update(tgz).digest('hex'),
            integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
          } } },
        }));
      } else if (url === '/npm/shout-lite/-/shout-lite-1.0.0.tgz') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tgz.length }).end(req.method === 'HEAD' ? undefined : tgz);
      } else if (url === '/npm/moved') {
        res.writeHead(301, { location: '/npm/shout-lite' }).end();
      } else if (url === '/npm/away') {
        res.writeHead(302, { location: `${elsewhereUrl}/stolen` }).end();
      } else if (url === '/npm/up-and-out') {
        res.writeHead(307, { location: '/private/admin' }).end();
      } else if (url === '/npm/loop') {
        res.writeHead(302, { location: '/npm/loop' }).end();
      } else if (url === '/npm/big') {
        res.writeHead(200, { 'content-length': 4096 }).end(Buffer.alloc(4096));
      } else if (url === '/npm/big-chunked') {
        res.write(Buffer.alloc(3000));
        setTimeout(() => res.end(Buffer.alloc(3000)), 20);
      } else if (url === '/npm/slow') {
        setTimeout(() => res.end('late'), 2_000).unref();
      } else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
    });
    registryUrl = `http://127.0.0.1:${await listen(registry)}`;
    proxy = await startRegistryProxy(`${registryUrl}/npm`);
  });

  afterAll(async () => {
    await proxy.close();
    registry.closeAllConnections();
    await closeServer(registry);
    await closeServer(elsewhere);
    rmSync(work, { recursive: true, force: true });
  });

  it('listens on a Unix socket in a private directory and keeps the registry path', () => {
    expect(statSync(proxy.socketPath).isSocket()).toBe(true);
    expect(statSync(join(proxy.socketPath, '..')).mode & 0o777).toBe(0o700);
    expect(proxy.registryPath).toBe('/npm/');
  });

  it('forwards a GET under the registry path to the registry, and returns the packument', async () => {
    seen.length = 0;
    const r = await raw(proxy.socketPath, 'GET', '/npm/shout-lite', { Accept: 'application/vnd.npm.install-v1+json', 'npm-command': 'install' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ name: 'shout-lite', 'dist-tags': { latest: '1.0.0' } });
    expect(seen).toMatchObject([{ method: 'GET', url: '/npm/shout-lite' }]);
    expect(seen[0]!.headers).toMatchObject({ host: registryUrl.slice('http://'.length), accept: 'application/vnd.npm.install-v1+json', 'npm-command': 'install' });
    // The registry's hop-by-hop headers (and those it names in Connection) and cookies stay here.
    expect(r.headers).not.toMatch(/x-hop|set-cookie|keep-alive/);
  });

  it('forwards HEAD and tarballs byte for byte', async () => {
    const head = await raw(proxy.socketPath, 'HEAD', '/npm/shout-lite/-/shout-lite-1.0.0.tgz');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const get = await raw(proxy.socketPath, 'GET', '/npm/shout-lite/-/shout-lite-1.0.0.tgz');
    expect(get.status).toBe(200);
    expect(Buffer.from(get.body, 'latin1').equals(tgz)).toBe(true);
  });

  it('does not forward the client\'s credentials, cookies, forwarding or hop-by-hop headers', async () => {
    seen.length = 0;
    await raw(proxy.socketPath, 'GET', '/npm/shout-lite', {
      Authorization: 'Bearer stolen', 'Proxy-Authorization': 'Basic eA==', Cookie: 'a=b', 'npm-otp': '123456',
      'X-Forwarded-For': '10.0.0.1', Forwarded: 'for=10.0.0.1', 'X-Real-IP': '10.0.0.1', TE: 'trailers', Upgrade: 'h2c', 'X-Custom': '1',
    });
    const headers = Object.keys(seen[0]!.headers);
    for (const name of ['authorization', 'proxy-authorization', 'cookie', 'npm-otp', 'x-forwarded-for', 'forwarded', 'x-real-ip', 'te', 'upgrade', 'x-custom']) expect(headers).not.toContain(name);
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT'])('refuses %s with 405 and forwards nothing', async (method) => {
    seen.length = 0;
    const r = await raw(proxy.socketPath, method, method === 'CONNECT' ? '127.0.0.1:22' : '/npm/shout-lite');
    expect(r.status).toBe(405);
    expect(r.headers).toContain('allow: get, head');
    if (method !== 'CONNECT') expect(JSON.parse(r.body).error).toMatch(/not allowed/);
    expect(seen).toEqual([]);
  });

  it.each([
    [`${'http://127.0.0.1:'}PORT/stolen`, 400],
    ['http://evil.example/x', 400],
    ['//evil.example/x', 400],
    ['//127.0.0.1:PORT/stolen', 400],
    ['/npm/../stolen', 400],
    ['/npm/%2e%2e/stolen', 400],
    ['/npm/%2E%2e/%2e%2E/stolen', 400],
    ['/npm/..%2fstolen', 400],
    ['/npm/%252e%252e/stolen', 400],
    ['/npm/./shout-lite', 400],
    ['/npm/%5c..%5cstolen', 400],
    ['/npm/x%00', 400],
    ['/npm/%zz', 400],
    ['/stolen', 404],
    ['/npmx/stolen', 404],
    ['/-/whoami', 404],
    ['*', 400],
    ['evil.example:80', 400],
  ])('never lets %j leave the registry path', async (target, status) => {
    seen.length = 0;
    elsewhereSeen.length = 0;
    const r = await raw(proxy.socketPath, 'GET', target.replace('PORT', elsewhereUrl.split(':').pop()!));
    // Node's own parser turns some of these away with a bare 400 before the proxy sees them.
    expect(r.status).toBe(status);
    expect(seen).toEqual([]);
    expect(elsewhereSeen).toEqual([]);
  });

  it('follows a redirect under the registry path, but not one to another origin or outside the path', async () => {
    elsewhereSeen.length = 0;
    const moved = await raw(proxy.socketPath, 'GET', '/npm/moved');
    expect(moved.status).toBe(200);
    expect(JSON.parse(moved.body).name).toBe('shout-lite');

    const away = await raw(proxy.socketPath, 'GET', '/npm/away');
    expect(away.status).toBe(403);
    expect(JSON.parse(away.body).error).toMatch(/redirected to another origin \(http:\/\/127\.0\.0\.1:\d+\); only http:\/\/127\.0\.0\.1:\d+ is reachable/);
    expect(away.headers).not.toContain('location');
    expect(elsewhereSeen).toEqual([]);

    seen.length = 0;
    const out = await raw(proxy.socketPath, 'GET', '/npm/up-and-out');
    expect(out.status).toBe(403);
    expect(seen.map((s) => s.url)).toEqual(['/npm/up-and-out']);

    const loop = await raw(proxy.socketPath, 'GET', '/npm/loop');
    expect(loop.status).toBe(502);
    expect(JSON.parse(loop.body).error).toMatch(/more than 5 redirects/);
  });

  it('answers 404s of the registry as they are', async () => {
    const r = await raw(proxy.socketPath, 'GET', '/npm/nope');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body)).toEqual({ error: 'Not found' });
  });

  it('keeps to a download budget over its whole life, by Content-Length and while streaming', async () => {
    const small = await startRegistryProxy(`${registryUrl}/npm/`, { maxBytes: 5000 });
    try {
      const first = await raw(small.socketPath, 'GET', '/npm/big');
      expect(first.status).toBe(200);
      expect(first.body.length).toBe(4096);
      const second = await raw(small.socketPath, 'GET', '/npm/big');
      expect(second.status).toBe(403);
      expect(JSON.parse(second.body).error).toMatch(/download limit of 5000 bytes/);
      expect(small.bytes).toBe(4096);
    } finally {
      await small.close();
    }
    // Without a Content-Length: cut off mid-body once the budget is passed (no clean end of the chunked body).
    const streaming = await startRegistryProxy(`${registryUrl}/npm/`, { maxBytes: 5000 });
    try {
      const cut = await raw(streaming.socketPath, 'GET', '/npm/big-chunked');
      expect(cut.status).toBe(200);
      expect(cut.body.length).toBe(3000);
      expect(cut.headers).toContain('transfer-encoding: chunked');
    } finally {
      await streaming.close();
    }
  });

  it('gives up on a registry that does not answer in time (504)', async () => {
    const quick = await startRegistryProxy(`${registryUrl}/npm/`, { requestTimeoutMs: 200 });
    try {
      const started = Date.now();
      const r = await raw(quick.socketPath, 'GET', '/npm/slow');
      expect(r.status).toBe(504);
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await quick.close();
    }
  });

  it('reports an unreachable registry as 502', async () => {
    const dead = await startRegistryProxy('http://127.0.0.1:9/');
    try {
      const r = await raw(dead.socketPath, 'GET', '/x');
      expect(r.status).toBe(502);
      expect(JSON.parse(r.body).error).toMatch(/could not be reached \(ECONNREFUSED\)/);
    } finally {
      await dead.close();
    }
  });

  it('removes the socket and its directory on close, cutting open requests', async () => {
    const p = await startRegistryProxy(`${registryUrl}/npm/`);
    const pending = raw(p.socketPath, 'GET', '/npm/slow');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await p.close();
    await p.close();
    expect(existsSync(p.socketPath)).toBe(false);
    expect(existsSync(join(p.socketPath, '..'))).toBe(false);
    expect((await pending).status).not.toBe(200);
  });

  it('refuses a registry that is not http(s)', async () => {
    await expect(startRegistryProxy('file:///etc/')).rejects.toThrow(/http\(s\)/);
  });

  it('serves npm itself: a real `npm install` with the sandbox settings, over a TCP relay to the socket', async () => {
    // What the sandbox driver does inside the install sandbox: 127.0.0.1:port → the proxy's socket.
    const relay = createNetServer((inside) => {
      const outside = connect(proxy.socketPath);
      const end = () => { inside.destroy(); outside.destroy(); };
      inside.on('error', end); outside.on('error', end);
      inside.pipe(outside).pipe(inside);
    });
    const port = await listen(relay);
    const project = mkdtempSync(join(tmpdir(), 'codeloom-proxy-npm-'));
    try {
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', dependencies: { 'shout-lite': '^1.0.0' } }));
      seen.length = 0;
      const env = { PATH: process.env.PATH!, HOME: project, npm_config_cache: join(project, '.cache'), ...sandboxNpmEnv(proxy.registryPath, port) };
      await promisify(execFile)('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, env, timeout: 60_000 });
      expect(readFileSync(join(project, 'node_modules/shout-lite/index.js'), 'utf8')).toContain('toUpperCase');
      // The packument's absolute tarball URL (the registry's host) was rewritten to the relay, path kept.
      expect(seen.map((s) => s.url)).toEqual(['/npm/shout-lite', '/npm/shout-lite/-/shout-lite-1.0.0.tgz']);
      const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
      expect(lock.packages['node_modules/shout-lite']?.resolved).toMatch(/\/npm\/shout-lite\/-\/shout-lite-1\.0\.0\.tgz$/);
    } finally {
      relay.close();
      rmSync(project, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('upstreamPath', () => {
  it('keeps the target as it came when it is under the base', () => {
    expect(upstreamPath('/', '/@scope%2fname')).toEqual({ path: '/@scope%2fname' });
    expect(upstreamPath('/', '/lodash?write=true')).toEqual({ path: '/lodash?write=true' });
    expect(upstreamPath('/npm/', '/npm/lodash/-/lodash-4.17.21.tgz')).toEqual({ path: '/npm/lodash/-/lodash-4.17.21.tgz' });
  });
  it('refuses what leaves it', () => {
    for (const t of ['/npm', '/', '/lodash', 'lodash', '//x/npm/', '/npm/../x', '/npm/%2e%2e/x', '/npm/a?b#c', '/npm/a b', '/npm/%252e%252e/x', '/npm/%2525252e']) {
      expect(upstreamPath('/npm/', t), t).toHaveProperty('error');
    }
  });
});
