// Jest's own order (slowest and largest first), with the tests that need AWS's Lambda runtime
// interface client moved to the end: scripts/test-all.sh compiles that client in the background
// while the rest of the suite runs, so they find it ready instead of holding a worker to wait.
const { default: Sequencer } = require('@jest/test-sequencer');

const NEEDS_RUNTIME_CLIENT = /[\\/]test[\\/]infra[\\/]lambda-(runtime|memory)\.test\.ts$/;

class RuntimeClientLast extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    const needing = sorted.filter((test) => NEEDS_RUNTIME_CLIENT.test(test.path));
    return [...sorted.filter((test) => !needing.includes(test)), ...needing];
  }
}

module.exports = RuntimeClientLast;
