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
        // The status line and headers leave now, before the first body byte exists, but in the same
        // socket write as whatever body the handler writes in this turn of the event loop (a JSON
        // answer, its chunk terminator): one send instead of three, and nothing waits longer than the turn.
        stream.cork();
        stream.flushHeaders();
        setImmediate(() => stream.uncork());
        return stream;
      },
    },
  };
}
