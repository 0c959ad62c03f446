/**
 * When a request's end triggers a full collection: only after a large body, and only once no other
 * request is in flight in the process (the peak this saves is measured in test/infra/lambda-memory.test.ts).
 */
import { CollectAfterLarge, LARGE_BODY_BYTES } from '../../../lambda/pipeline/collect-after-large';

function collector() {
  let collections = 0;
  return { gate: new CollectAfterLarge(() => collections++), collections: () => collections };
}

it('collects after a large request, not after a small one', () => {
  const { gate, collections } = collector();
  gate.started();
  gate.ended(LARGE_BODY_BYTES - 1);
  expect(collections()).toBe(0);
  gate.started();
  gate.ended(LARGE_BODY_BYTES);
  expect(collections()).toBe(1);
});

it('waits for the requests still in flight, then collects once', () => {
  const { gate, collections } = collector();
  gate.started();
  gate.started();
  gate.ended(6 * 1024 * 1024);
  expect(collections()).toBe(0);
  expect(collections()).toBe(0);
  gate.ended(100);
  expect(collections()).toBe(1);
  // Owed once only.
  gate.started();
  gate.ended(100);
  expect(collections()).toBe(1);
});

it('does nothing where Node was started without --expose-gc', () => {
  const gate = new CollectAfterLarge(undefined);
  gate.started();
  expect(() => gate.ended(6 * 1024 * 1024)).not.toThrow();
});
