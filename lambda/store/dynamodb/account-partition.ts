import type { DocumentClient } from './document-client';
import { allItems } from './paginate';

/** The accounts table keeps everything of one account in one partition: its tokens, provider keys and budgets. */
export const accountPk = (accountId: string) => `ACCOUNT#${accountId}`;

/** Which items of an account's partition to read: those whose sort key starts with `prefix`. */
export interface PrefixQuery {
  table: string;
  accountId: string;
  prefix: string;
  /** Set where a write just made must be seen (a budget set a moment ago). */
  consistentRead?: boolean;
  /** A FilterExpression over the attributes; its values, if any, with `:`-names other than `:pk` and `:prefix`. */
  filter?: { expression: string; values?: Record<string, unknown> };
}

/** Every item of an account's partition under one sort-key prefix, all pages: one Query per page. */
export function itemsUnderPrefix(doc: DocumentClient, query: PrefixQuery) {
  return allItems((start) =>
    doc.send({
      operation: 'Query',
      input: {
        TableName: query.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ...(query.filter ? { FilterExpression: query.filter.expression } : {}),
        ExpressionAttributeValues: {
          ':pk': accountPk(query.accountId),
          ':prefix': query.prefix,
          ...query.filter?.values,
        },
        ...(query.consistentRead ? { ConsistentRead: true } : {}),
        ExclusiveStartKey: start,
      },
    }),
  );
}
