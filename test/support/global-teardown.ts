export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __stopDynamoDbLocal?: () => Promise<void> }).__stopDynamoDbLocal?.();
}
