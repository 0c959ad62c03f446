import { verifyToken } from '../auth/verify';
import { AuthenticationError, StoreUnavailableError } from '../errors';
import type { Authenticated, LookupsStarted, Routed } from './state';
import type { Step } from './step';

function missingCredentialMessage(state: Routed): string {
  const { header, scheme } = state.endpoint.dialect.credential;
  const where = scheme ? `the ${header} header as "${scheme} <token>"` : `the ${header} header`;
  return `Missing credential: send a proxy token (sk-proxy-…) in ${where}, or your own provider key there plus x-proxy-token.`;
}

/** Step 3 (docs/behaviour.md, "Processing order"): the proxy token must exist, match, be unrevoked and allow proxying. */
export function authenticate(): Step<Routed & LookupsStarted, Authenticated> {
  return {
    name: 'authenticate',
    async run(state) {
      const { credential, token, lookups } = state;
      if (!credential) throw new AuthenticationError(missingCredentialMessage(state));
      // Repeated credential headers arrive joined with commas: which one was meant is unknowable.
      if (/[\s,]/.test(credential)) throw new AuthenticationError('Ambiguous credential: send exactly one credential header with one value.');
      if (!token || !lookups) {
        throw new AuthenticationError(
          state.mode === 'stored'
            ? 'Invalid proxy token.'
            : 'Pass-through mode needs the x-proxy-token header with a valid proxy token (sk-proxy-…) to identify the account.',
        );
      }
      const gate = await lookups.gate.catch((error) => {
        throw new StoreUnavailableError(error);
      });
      // The gate counted nothing for a refused token; the secret is checked here too, whatever the store said.
      verifyToken(lookups.presented.secretHash, gate.record, 'proxy');
      if (gate.kind === 'refused') throw new AuthenticationError('Invalid proxy token.');
      return { credential, token, gate, lookups };
    },
  };
}
