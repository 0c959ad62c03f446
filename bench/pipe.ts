/**
 * The bare pipe contender: a pass-through proxy with nothing but
 * node:http, a keep-alive agent and two pipes. No auth, no store, no parsing.
 * Run as its own process: env TARGET (upstream origin) and PORT (0 = any free port).
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

const target = new URL(process.env.TARGET ?? 'http://127.0.0.1:1');
const agent = new Agent({ keepAlive: true, maxSockets: 1024 });

const server = createServer((clientRequest, clientResponse) => {
  const upstreamRequest = request(
    {
      host: target.hostname,
      port: target.port,
      method: clientRequest.method,
      path: clientRequest.url,
      headers: { ...clientRequest.headers, host: target.host },
      agent,
    },
    (upstreamResponse) => {
      clientResponse.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
      // Send the status line at once, as a streaming proxy must, before the first body byte.
      clientResponse.flushHeaders();
      upstreamResponse.pipe(clientResponse);
    },
  );
  upstreamRequest.on('error', () => {
    if (!clientResponse.headersSent) clientResponse.writeHead(502).end();
    else clientResponse.destroy();
  });
  clientRequest.pipe(upstreamRequest);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
