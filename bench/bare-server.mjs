// The yardstick: a bare Fastify route answering {}.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({}));
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`listening on ${address}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
