// A stand-in for Lambda's Node.js runtime in response-streaming mode, faithful
// to its wire protocol: the handler is marked by `awslambda.streamifyResponse`;
// `awslambda.HttpResponseStream.from(stream, prelude)` writes the prelude as JSON
// followed by 8 NUL bytes, then the body goes into the same stream.
// Usage: node lambda-runtime-host.mjs <handler bundle> <event json>; prints a JSON report.
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
globalThis.awslambda = {
  streamifyResponse(handler) {
    handler[STREAMING] = 'response';
    return handler;
  },
  HttpResponseStream: {
    from(stream, prelude) {
      stream.setContentType?.('application/vnd.awslambda.http-integration-response');
      stream.write(Buffer.concat([Buffer.from(JSON.stringify(prelude)), Buffer.alloc(8)]));
      return stream;
    },
  },
};

const [bundle, eventJson] = process.argv.slice(2);
const started = performance.now();
const writes = [];
const responseStream = new Writable({
  write(chunk, _encoding, done) {
    writes.push({ at: performance.now() - started, base64: Buffer.from(chunk).toString('base64') });
    done();
  },
});
responseStream.setContentType = (type) => (responseStream.contentType = type);

const { handler } = await import(pathToFileURL(bundle).href);
await handler(JSON.parse(eventJson), responseStream, { awsRequestId: 'test-invocation', getRemainingTimeInMillis: () => 300_000 });
process.stdout.write(JSON.stringify({ marked: handler[STREAMING] === 'response', contentType: responseStream.contentType, ended: responseStream.writableEnded, resolvedAt: performance.now() - started, writes }));
process.exit(0);
