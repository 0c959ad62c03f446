import { describeError } from '../base/logger';
import { failedAttemptsOf } from '../upstream/attempts';
import type { ParsedToken } from '../auth/proxy-token';
import type { Deps } from '../wiring/deps';
import { ProxyError, RefusalError } from '../base/errors';
import { buildRow, type Completion, type RowFacts } from '../usage/build-row';
import type { UsageRow } from '../usage/usage-row';
import { requestSecrets } from './request-secrets';
import type { Recordable } from './state';

/** What writing a row uses: the row writer, the prices (the account's own, once the budget step has read them), the log. */
export type RecordDeps = Pick<Deps, 'rowWriter' | 'prices' | 'log'>;

/** How a request ended, once known: at once (a refusal, a failed call) or when its body has gone out. */
export type Ending = Completion | Promise<Completion>;

/**
 * Step 11 (record): one usage row per request that has a row's facts (its token and its tags,
 * proved by validation) and ended in a way that leaves one (pipeline.ts decides which). The row is
 * built once the ending is known, after the response has gone out, and is tracked as the request's
 * background work from the moment it ended, so the runtime doesn't stop before the row is written.
 * A row that could not be built, or that neither the store nor the spool took, is logged as an
 * error with its request id: the background work swallows what it tracks, and no row may go missing
 * without a word.
 */
export function recordUsage(deps: RecordDeps): (state: Recordable, ending: Ending) => void {
  return function record(state, ending) {
    state.work.add(
      Promise.resolve(ending)
        .then((completion) => {
          const row: UsageRow = buildRow(rowFacts(state, state.token), completion, state.prices ?? deps.prices);
          return deps.rowWriter.write(row);
        })
        .catch((error: unknown) =>
          deps.log.error('usage row not recorded', { request_id: state.request.id, ...describeError(error) }),
        ),
    );
  };
}

/** Whether the request has proved what a row is made of (its token and its tags). */
export function isRecordable(state: object): state is Recordable {
  const { token, tags } = state as Partial<Recordable>;
  return token !== undefined && tags !== undefined;
}

/** A refusal's row: what the client was told. */
export function refusalEnding(error: RefusalError): Completion {
  return { status: error.status, error: error.message };
}

/** The row of a request whose forwarding failed: a typed error's status, anything else a bad gateway. */
export function failedForwardEnding(error: unknown): Completion {
  const attempts = failedAttemptsOf(error);
  return {
    status: error instanceof ProxyError ? error.status : 502,
    error: error instanceof Error ? error.message : String(error),
    ...(attempts ? { attempts: [...attempts] } : {}),
  };
}

function rowFacts(state: Recordable, token: ParsedToken): RowFacts {
  return {
    accountId: token.accountId,
    tokenId: token.tokenId,
    requestId: state.request.id,
    receivedAt: state.request.receivedAt,
    startedAt: state.request.startedAt,
    provider: state.provider.id,
    kind: state.endpoint.kind,
    billing: state.endpoint.dialect.billing,
    requestedModel: state.pathModel ?? state.body?.model,
    requester: state.requester,
    tags: state.tags,
    stream: state.stream,
    mode: state.mode,
    secrets: requestSecrets(state),
  };
}
