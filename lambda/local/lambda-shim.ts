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
        // Send the status line and headers now, before the first body byte exists.
        stream.flushHeaders();
        return stream;
      },
    },
  };
}
