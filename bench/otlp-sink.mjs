// A trivial OTLP/HTTP receiver for the observability bench: accepts POST /v1/traces (JSON or protobuf),
// counts the bytes, answers 200. The bench's "on" server exports its spans here.
import { createServer } from 'node:http';

let bytes = 0;
let posts = 0;
const server = createServer((req, res) => {
  req.on('data', (d) => { bytes += d.length; });
  req.on('end', () => {
    if (req.url === '/stats') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes, posts }));
    posts++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
