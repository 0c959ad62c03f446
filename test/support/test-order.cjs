// Jest's own order (files that failed last time first, then the slowest, then the largest), except
// that the files running AWS's Lambda runtime interface client go last: scripts/test-all.sh compiles
// the client in the background while the suite runs, and these files wait for it.
const Sequencer = require('@jest/test-sequencer').default;

const NEEDS_RUNTIME_CLIENT = /[/\\]test[/\\]infra[/\\]lambda-(runtime|memory)\.test\.ts$/;

class RuntimeClientLast extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    return [
      ...sorted.filter((test) => !NEEDS_RUNTIME_CLIENT.test(test.path)),
      ...sorted.filter((test) => NEEDS_RUNTIME_CLIENT.test(test.path)),
    ];
  }
}

module.exports = RuntimeClientLast;
