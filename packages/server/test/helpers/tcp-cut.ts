import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './private-redis.js';

/**
 * A TCP relay in front of a real service, whose link the test can cut and
 * restore: cut closes every relayed connection and refuses new ones (as a
 * stopped server does), restore listens again on the same port.
 */
export class CuttableLink {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private constructor(readonly port: number, private readonly target: { host: string; port: number }) {}

  static async to(target: { host: string; port: number }): Promise<CuttableLink> {
    const link = new CuttableLink(await freePort(), target);
    await link.restore();
    return link;
  }

  restore(): Promise<void> {
    if (this.server) return Promise.resolve();
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => { client.destroy(); upstream.destroy(); });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.server = server;
    return new Promise((resolve, reject) => { server.once('error', reject); server.listen(this.port, '127.0.0.1', () => resolve()); });
  }

  cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}
