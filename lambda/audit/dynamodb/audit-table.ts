import type { DocumentClient } from '../../store/dynamodb/document-client';
import { pages, type PageKey } from '../../store/dynamodb/paginate';
import { sortKeyCursor } from '../../store/dynamodb/sort-key-cursor';
import type { AuditEntry, AuditLog, AuditQuery, AuditValue } from '../ports';

/** Reads at most this many pages to fill one page of filtered entries. */
const MAX_PAGES_PER_LIST = 20;

/** A cursor carries an entry's `at_id`: its time and 16 hex digits of id. */
const cursors = sortKeyCursor(
  /^\d{4}-\d\d-\d\dT[\d:.]+Z#[0-9a-f]{16}$/,
  'cursor must be a next_cursor of an earlier answer.',
);

/** An entry as stored: the audit table's item. */
export interface AuditItem {
  account_id: string;
  at_id: string;
  actor: string;
  actor_name?: string;
  address?: string;
  action: AuditEntry['action'];
  target: string;
  /** JSON text, so any shape of setting is kept exactly as it was. */
  before?: string;
  after?: string;
}

/** The entry an audit item holds. */
export function toEntry(item: AuditItem): AuditEntry {
  const [at, id] = item.at_id.split('#');
  return {
    accountId: item.account_id,
    id,
    at,
    actor: item.actor,
    actorName: item.actor_name,
    address: item.address,
    action: item.action,
    target: item.target,
    before: item.before === undefined ? undefined : (JSON.parse(item.before) as AuditValue),
    after: item.after === undefined ? undefined : (JSON.parse(item.after) as AuditValue),
  };
}

/**
 * One partition per account, sorted by time and id (`at_id`), so newest first is one reverse Query.
 * Entries are only ever put, each on a key no other entry has: the function's role holds PutItem and
 * Query on this table and nothing else (lib/permissions.ts), so it can neither change nor delete one.
 */
export class DynamoAuditLog implements AuditLog {
  constructor(
    private readonly doc: DocumentClient,
    private readonly table: string,
  ) {}

  async append(entry: AuditEntry): Promise<void> {
    const item: AuditItem = {
      account_id: entry.accountId,
      at_id: `${entry.at}#${entry.id}`,
      actor: entry.actor,
      actor_name: entry.actorName,
      address: entry.address,
      action: entry.action,
      target: entry.target,
      before: entry.before === undefined ? undefined : JSON.stringify(entry.before),
      after: entry.after === undefined ? undefined : JSON.stringify(entry.after),
    };
    // A put that would replace an entry fails instead: the log is append-only in the code as in the role.
    await this.doc.send({
      operation: 'PutItem',
      input: { TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(at_id)' },
    });
  }

  async list(accountId: string, query: AuditQuery): Promise<{ items: AuditEntry[]; nextCursor: string | null }> {
    const filters: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {
      ':account': accountId,
      ':from': query.from ?? '0000',
      ':to': query.to ?? '9999',
    };
    if (query.actor) {
      filters.push('actor = :actor');
      values[':actor'] = query.actor;
    }
    if (query.action) {
      filters.push('#action = :action');
      names['#action'] = 'action';
      values[':action'] = query.action;
    }
    const cursor = query.cursor ? cursors.decode(query.cursor) : undefined;
    const items: AuditEntry[] = [];
    let resumeAt: PageKey | undefined;
    let read = 0;
    const entryPages = pages(
      (start) =>
        this.doc.send({
          operation: 'Query',
          input: {
            TableName: this.table,
            KeyConditionExpression: 'account_id = :account AND at_id BETWEEN :from AND :to',
            ...(filters.length ? { FilterExpression: filters.join(' AND ') } : {}),
            ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: values,
            ScanIndexForward: false,
            Limit: query.limit - items.length,
            ExclusiveStartKey: start,
          },
        }),
      cursor ? { account_id: accountId, at_id: cursor } : undefined,
    );
    for await (const page of entryPages) {
      for (const item of page.items as AuditItem[]) items.push(toEntry(item));
      resumeAt = page.lastKey;
      if (++read >= MAX_PAGES_PER_LIST || items.length >= query.limit) break;
    }
    // The last key read, not the last entry kept: a filter may have passed over entries after it.
    return { items, nextCursor: resumeAt ? cursors.encode(String(resumeAt.at_id)) : null };
  }
}
