import type { ParsedToken } from '../auth/proxy-token';
import type { Deps } from '../deps';
import { buildRow, type Completion, type RowFacts } from '../usage/build-row';
import type { UsageRow } from '../usage/usage-row';
import { requestSecrets } from './request-secrets';
import type { Recordable } from './state';

/** What writing a row uses: the row writer and the prices. */
export type RecordDeps = Pick<Deps, 'rowWriter' | 'prices'>;

/**
 * Step 11 (record): one usage row per request. It runs after the response has
 * gone out and is tracked as background work, so the runtime doesn't stop
 * before the row is written.
 */
export function recordUsage(deps: RecordDeps, state: Recordable, completion: Completion): UsageRow {
  const row = buildRow(rowFacts(state, state.token), completion, deps.prices);
  state.work.add(deps.rowWriter.write(row));
  return row;
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
