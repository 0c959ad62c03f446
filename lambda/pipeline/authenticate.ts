import { verifyToken } from '../auth/verify';
import { AuthenticationError, StoreUnavailableError } from '../base/errors';
import type { Authenticated, Identified } from './state';
import type { Step } from './step';

/** Step 3 (docs/behaviour.md, "Processing order"): the proxy token must exist, match, be unrevoked and allow proxying. */
export function authenticate(): Step<Identified, Authenticated> {
  return {
    name: 'authenticate',
    async run(state, reads) {
      let passed = false;
      try {
        const gate = await reads.gate.catch((error) => {
          throw new StoreUnavailableError(error);
        });
        // The gate counted nothing for a refused token; the secret is checked here too, whatever the store said.
        verifyToken(state.presented.secretHash, gate.record, 'proxy');
        if (gate.kind === 'refused') throw new AuthenticationError('Invalid proxy token.');
        passed = true;
        return { gate };
      } finally {
        // Passed or refused (a refusal is counted where it is answered), the check is over.
        state.signIn.done(passed);
      }
    },
  };
}
