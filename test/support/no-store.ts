/**
 * The unit project's setup (jest.config.js): its tests run with no DynamoDB Local. In a full run the
 * integration project's store is in the environment every worker inherits; removing it here makes a
 * unit test that reaches for the store fail in the full run exactly as it does alone.
 */
delete process.env.DYNAMODB_ENDPOINT;
