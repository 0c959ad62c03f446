/**
 * The integration project's test environment: Node's, with this worker's own DynamoDB Local.
 * global-setup.ts starts one per worker (`DYNAMODB_ENDPOINTS`), so that the store a file writes to
 * holds only its worker's share of the run's items and stream records. The endpoint is set
 * in the worker's own environment, before the test file's copy of it is made, so the servers and
 * processes a test starts inherit it too.
 */
const { TestEnvironment } = require('jest-environment-node');

class WorkerStoreEnvironment extends TestEnvironment {
  constructor(config, context) {
    const endpoints = (process.env.DYNAMODB_ENDPOINTS ?? '').split(',').filter(Boolean);
    if (endpoints.length > 0)
      process.env.DYNAMODB_ENDPOINT = endpoints[(Number(process.env.JEST_WORKER_ID ?? '1') - 1) % endpoints.length];
    super(config, context);
  }
}

module.exports = WorkerStoreEnvironment;
