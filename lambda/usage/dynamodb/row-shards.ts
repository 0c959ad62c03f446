import { createHash } from 'node:crypto';

/**
 * An account's usage rows are spread over ROW_SHARDS partitions, `<account id>#0` … `#7`, chosen
 * by the row's id: one partition takes at most 1,000 write units a second, and a priced row costs
 * two inside its transaction, so one account's rows in one partition would cap it near 500
 * requests a second (docs/deploy.md, "Partition ceilings"). The id picks the shard, so one row is
 * still one GetItem; readers merge the shards in time order. Rows written before shards existed
 * stay in the partition named by the bare account id, which every reader reads as one more shard.
 */
export const ROW_SHARDS = 8;

export function rowShardOf(id: string): number {
  return createHash('sha256').update(id).digest()[0] % ROW_SHARDS;
}

/** The partition key value of a row. */
export const rowPartition = (accountId: string, id: string) => `${accountId}#${rowShardOf(id)}`;

/** Every partition that may hold an account's rows: its shards, then the one rows had before shards. */
export function rowPartitions(accountId: string): string[] {
  return [...Array.from({ length: ROW_SHARDS }, (_, shard) => `${accountId}#${shard}`), accountId];
}

/** The account a stored row's partition key belongs to. */
export const accountOfRowPartition = (partition: string) => partition.replace(/#\d+$/, '');
