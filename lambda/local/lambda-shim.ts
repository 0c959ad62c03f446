import type { ServerResponse } from 'node:http';

interface Prelude {
  statusCode: number;
  headers?: Record<string, string>;
  cookies?: string[];
}

/**
 * The two pieces of Lambda's Node runtime that a streaming handler touches:
 * `streamifyResponse` (marks the handler) and `HttpResponseStream.from`
 * (writes the status and headers before the body). Here the response stream is
 * a Node `ServerResponse`, so the prelude becomes `writeHead`.
 */
export function installLambdaShim(): void {
  // The AWS SDK may have created the global already (it keeps its per-invocation store there): add to it.
  const globals = globalThis as { awslambda?: Record<string, unknown> };
  if (typeof globals.awslambda?.streamifyResponse === 'function') return;
  globals.awslambda = {
    ...globals.awslambda,
    streamifyResponse: <T>(handler: T): T => handler,
    HttpResponseStream: {
      from(stream: ServerResponse, prelude: Prelude) {
        const headers: Record<string, string | string[]> = { ...prelude.headers };
        if (prelude.cookies?.length) headers['set-cookie'] = prelude.cookies;
        stream.writeHead(prelude.statusCode, headers);
        // No flush here: whatever body the handler writes in this turn of the event loop (a JSON answer
        // and its chunk terminator) leaves in the same socket write as the status line and headers. A
        // stream whose first byte is still upstream gets its headers at the end of the turn, so the client
        // sees the status at once. (Corking the response instead loses the body on Node 22.)
        setImmediate(() => stream.flushHeaders());
        return stream;
      },
    },
  };
}
