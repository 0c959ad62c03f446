/**
 * A provider whose answer a test writes byte by byte: for bodies the fakes do
 * not make (hundreds of megabytes, one 20 MB event, a credential split across
 * two writes). Each write waits for the socket to drain, as a real server does.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  json: Record<string, unknown>;
}

export interface Script {
  status: number;
  contentType: string;
  /** Further response headers (e.g. `content-encoding`), or made from the request (a provider echoing what it received). */
  headers?: Record<string, string> | ((request: ScriptedRequest) => Record<string, string>);
  /** Writes the body; `write` resolves once the bytes are handed to the socket. */
  body(write: (chunk: string | Buffer) => Promise<void>, request: ScriptedRequest): Promise<void>;
}

export interface ScriptedUpstream {
  url: string;
  /** The answer to the next request (queued in order). */
  next(script: Script): void;
  requests: ScriptedRequest[];
  /** Bytes written for each answered request, in order. */
  sentBytes: number[];
  close(): Promise<void>;
}

export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  const queue: Script[] = [];
  const requests: ScriptedRequest[] = [];
  const sentBytes: number[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = {
      path: req.url ?? '/',
      headers: req.headers,
      json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'),
    };
    requests.push(request);
    const script = queue.shift();
    if (!script) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"no script queued"}}');
      return;
    }
    res.on('error', () => undefined);
    const headers = typeof script.headers === 'function' ? script.headers(request) : script.headers;
    res.writeHead(script.status, { 'content-type': script.contentType, ...headers });
    let sent = 0;
    const write = (chunk: string | Buffer) =>
      new Promise<void>((resolve) => {
        if (res.destroyed) return resolve();
        sent += Buffer.byteLength(chunk);
        if (res.write(chunk)) return resolve();
        // Whichever comes first ends the wait and removes the other listener, so a long answer
        // written under backpressure does not pile up listeners on the response.
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.once('drain', done).once('close', done);
      });
    try {
      await script.body(write, request);
    } finally {
      sentBytes.push(sent);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    next: (script) => queue.push(script),
    requests,
    sentBytes,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Resident memory of a process in bytes (Linux), for loose bounds. */
export async function rssOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** CPU time (user + system) a process has used so far, in seconds (Linux). */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of /proc/<pid>/stat (12 and 13 after the command name), in clock ticks.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
