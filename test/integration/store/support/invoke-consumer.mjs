// Invokes the built consumer Lambda (dist/lambda/stream-consumer.mjs) once per line of stdin,
// each line one event, and prints each answer as a line: the bundle as Lambda would run it.
import { createInterface } from 'node:readline';

const { handler } = await import(new URL('../../../../dist/lambda/stream-consumer.mjs', import.meta.url).href);
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const answer = await handler(JSON.parse(line), { awsRequestId: 'test', getRemainingTimeInMillis: () => 60_000 });
  process.stdout.write(JSON.stringify(answer) + '\n');
}
