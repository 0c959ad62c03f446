import type { PluginExecutionMode } from '@middy/core';
import type { Readable, Writable } from 'node:stream';

/** What Lambda's Node runtime provides as the global `awslambda` (the local server's: lambda/local/lambda-shim.ts). */
interface LambdaStreaming {
  streamifyResponse<H>(handler: H): H;
  HttpResponseStream: { from(stream: Writable, prelude: object): Writable };
}

/** The parts of Middy's core an execution mode is handed (Middy types them as a bare function). */
type MiddyCore = {
  middyRequest(event: unknown, context: unknown): unknown;
  runRequest(
    request: unknown,
    before: unknown,
    handler: unknown,
    after: unknown,
    onError: unknown,
    plugin: unknown,
  ): Promise<unknown>;
};
type MiddyPlugin = { requestStart(request: unknown): void; requestEnd(request: unknown): unknown };
type StreamedHandler = ((event: unknown, stream: Writable, context: unknown) => Promise<void>) & {
  handler?: (replacement: unknown) => StreamedHandler;
};

/** Writes of a string body: Node's default high-water mark, so a long answer waits for the client between them. */
const STRING_SLICE = 16 * 1024;

class PrematureCloseError extends Error {
  override readonly name = 'PrematureCloseError';
  constructor(side: 'body' | 'response') {
    super(side === 'body' ? 'the response body closed before its end' : 'the response stream closed before its end');
  }
}

/**
 * Pipes `body` into `out`; settles once `out` has finished, or fails. As with `stream.pipeline`, a
 * failure on either side destroys the other with it: a client that leaves (the response closing
 * early) destroys the body, so the relay stops the provider's call, and a body cut with an error
 * ends the client's stream with that error. Unlike it, a body that ends normally costs no more
 * than the pipe: `stream.pipeline` aborts an internal controller at every ending, normal ones
 * included, which builds an abort error each time (docs/decisions.md).
 */
export function sendBody(body: Readable, out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      body.unpipe(out);
      if (!body.destroyed) body.destroy(error);
      if (!out.destroyed) out.destroy(error);
      reject(error);
    };
    body.on('error', fail);
    out.on('error', fail);
    body.once('close', () => {
      if (!body.readableEnded) fail(body.errored ?? new PrematureCloseError('body'));
    });
    out.once('close', () => {
      if (!out.writableFinished) fail(out.errored ?? new PrematureCloseError('response'));
    });
    out.once('finish', () => {
      if (settled) return;
      settled = true;
      resolve();
    });
    // Either side may have ended before the pipe is attached (a client gone, a body cut early).
    if (out.destroyed) return fail(out.errored ?? new PrematureCloseError('response'));
    if (body.destroyed && !body.readableEnded) return fail(body.errored ?? new PrematureCloseError('body'));
    body.pipe(out);
  });
}

/** A string body, in slices that respect the client's pace, then the end. */
async function sendText(text: string, out: Writable): Promise<void> {
  for (let at = 0; at < text.length; at += STRING_SLICE) {
    if (!out.write(text.slice(at, at + STRING_SLICE)) && at + STRING_SLICE < text.length)
      await new Promise<void>((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        out.once('error', onError);
        out.once('drain', () => {
          out.off('error', onError);
          resolve();
        });
      });
  }
  await new Promise<void>((resolve, reject) => {
    out.once('error', reject);
    out.end(() => resolve());
  });
}

/**
 * Middy's execution mode for response streaming, with the body sent by `sendBody`: the prelude
 * (status and headers) through the runtime's `HttpResponseStream.from`, then the body, a string or
 * a Node stream, then Middy's `requestEnd` (the request's after-response work), whichever way the
 * body ended. Middy's own streaming mode does the same through `stream.pipeline`.
 */
export const streamResponse = ((
  core: MiddyCore,
  before: unknown,
  handler: unknown,
  after: unknown,
  onError: unknown,
  plugin: MiddyPlugin,
) => {
  const { awslambda } = globalThis as unknown as { awslambda: LambdaStreaming };
  const streamed: StreamedHandler = awslambda.streamifyResponse(async (event, responseStream, context) => {
    const request = core.middyRequest(event, context);
    plugin.requestStart(request);
    const response = (await core.runRequest(request, before, handler, after, onError, plugin)) as
      { statusCode?: number; body?: string | Readable } | undefined;
    let out = responseStream;
    let body: string | Readable = '';
    if (response?.statusCode) {
      const { body: responseBody, ...prelude } = response;
      body = responseBody ?? '';
      out = awslambda.HttpResponseStream.from(responseStream, prelude);
      // An empty write sends the prelude on its own, before the body's first byte is known.
      out.write('');
    }
    let failure: Error | undefined;
    try {
      await (typeof body === 'string' ? sendText(body, out) : sendBody(body, out));
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
    }
    try {
      await plugin.requestEnd(request);
    } catch (error) {
      if (failure === undefined) throw error;
    }
    if (failure !== undefined) throw failure;
  });
  streamed.handler = (replacement) => {
    handler = replacement;
    return streamed;
  };
  return streamed;
}) as unknown as PluginExecutionMode;
