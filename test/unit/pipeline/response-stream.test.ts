/**
 * sendBody, the way a response body reaches the runtime's response stream: what `stream.pipeline`
 * guarantees (a failure on one side stops the other), without its abort on a normal end.
 */
import { PassThrough, Readable, Writable } from 'node:stream';
import { sendBody } from '../../../lambda/pipeline/response-stream';

/** A response stream that keeps what it is sent. */
function responseStream() {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { out, text: () => Buffer.concat(chunks).toString('utf8') };
}

it('sends every byte of a body and settles once the response has finished', async () => {
  const { out, text } = responseStream();
  const body = new PassThrough();
  const sent = sendBody(body, out);
  body.write('data: one\n\n');
  body.end('data: two\n\n');
  await sent;
  expect(text()).toBe('data: one\n\ndata: two\n\n');
  expect(out.writableFinished).toBe(true);
});

it('stops the body when the client leaves before its end', async () => {
  const { out } = responseStream();
  const body = new PassThrough();
  const sent = sendBody(body, out);
  body.write('data: one\n\n');
  out.destroy();
  await expect(sent).rejects.toThrow('the response stream closed before its end');
  expect(body.destroyed).toBe(true);
});

it('ends the response with the error of a body cut by one', async () => {
  const { out } = responseStream();
  const body = new PassThrough();
  const sent = sendBody(body, out);
  body.destroy(new Error('upstream connection closed mid-response'));
  await expect(sent).rejects.toThrow('upstream connection closed mid-response');
  expect(out.destroyed).toBe(true);
  expect(out.errored?.message).toBe('upstream connection closed mid-response');
});

it('stops the body of a client that left before it was attached', async () => {
  const { out } = responseStream();
  out.destroy();
  const body = new PassThrough();
  await expect(sendBody(body, out)).rejects.toThrow('the response stream closed before its end');
  expect(body.destroyed).toBe(true);
});

it('ends the response of a body cut before it was attached', async () => {
  const { out } = responseStream();
  const body = new PassThrough();
  body.on('error', () => undefined);
  body.destroy(new Error('upstream stalled'));
  await expect(sendBody(body, out)).rejects.toThrow('upstream stalled');
  expect(out.destroyed).toBe(true);
});

it('sends a body that had already ended', async () => {
  const { out, text } = responseStream();
  const body = Readable.from([Buffer.from('{"ok":true}')]);
  await new Promise((resolve) => body.once('end', resolve).resume());
  await sendBody(body, out);
  expect(text()).toBe('');
  expect(out.writableFinished).toBe(true);
});
