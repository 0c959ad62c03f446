import { PassThrough } from 'node:stream';
import type { UpstreamBody, UpstreamResponse } from './call-upstream';

/** Only an error body's start is read to decide what it says; the client still gets all of it. */
const PEEK_BYTES = 64 * 1024;

/** A body whose first bytes were read ahead, replayed in full to whoever reads it next. */
class ReplayedBody extends PassThrough implements UpstreamBody {
  complete = false;
}

/**
 * Reads the start of an answer's body (up to 64 KB) to tell what kind of error it is, and hands
 * back an answer whose body gives every byte again, the rest still streaming from the provider.
 */
export function peekBody(response: UpstreamResponse): Promise<{ head: string; response: UpstreamResponse }> {
  const source = response.body;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const finish = (ended: boolean) => {
      if (done) return;
      done = true;
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('close', onClose);
      source.pause();
      const head = Buffer.concat(chunks);
      const body = new ReplayedBody();
      body.write(head);
      if (ended) {
        body.complete = true;
        body.end();
      } else {
        source.once('end', () => (body.complete = true));
        source.once('close', () => {
          if (!body.complete) body.destroy();
        });
        source.pipe(body);
      }
      resolve({ head: head.toString('utf8'), response: { ...response, body } });
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= PEEK_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(source.complete);
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('close', onClose);
  });
}
