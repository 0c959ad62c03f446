/**
 * Write units per partition, counted from the calls DynamoDB answered (store-gate.ts), the way
 * DynamoDB charges them: a put or update costs one unit per started KB of the item, twice inside
 * a transaction. An update is charged by the item it leaves behind: the item its answer returns
 * when it asked for it (the token gate does), else the attributes it names (the counters written
 * in transactions are small items), at least one unit.
 */
import { TABLES, type TableId } from '../../../lambda/store/tables';
import type { StoreCall } from './store-gate';

type Wire = Record<string, unknown>;

export interface PartitionHeat {
  table: TableId;
  /** The partition key's value. */
  partition: string;
  units: number;
}

/** DynamoDB's item size (`itemSize`): attribute names plus values (strings and binaries by bytes, numbers about one byte per two digits). */
function valueSize(value: unknown): number {
  const typed = value as Wire;
  if ('S' in typed) return Buffer.byteLength(String(typed.S));
  if ('N' in typed) return Math.ceil(String(typed.N).replace(/^-|\.|^0+/g, '').length / 2) + 1;
  if ('B' in typed) return Buffer.from(String(typed.B), 'base64').length;
  if ('BOOL' in typed || 'NULL' in typed) return 1;
  if ('M' in typed) return 3 + itemSize(typed.M as Wire);
  if ('L' in typed) return 3 + (typed.L as unknown[]).reduce<number>((sum, entry) => sum + 1 + valueSize(entry), 0);
  if ('SS' in typed) return (typed.SS as string[]).reduce((sum, entry) => sum + Buffer.byteLength(entry), 0);
  if ('NS' in typed) return (typed.NS as string[]).reduce((sum, entry) => sum + entry.length, 0);
  return 0;
}

export function itemSize(item: Wire): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value), 0);
}

const unitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

function tableIdOf(name: string): TableId | undefined {
  return (Object.keys(TABLES) as TableId[]).find((id) => name.endsWith(TABLES[id].logicalName));
}

function partitionOf(table: TableId, keyOrItem: Wire): string {
  const value = keyOrItem[TABLES[table].partitionKey] as Wire | undefined;
  return String(value?.S ?? value?.N ?? '');
}

interface Write {
  TableName: string;
  Item?: Wire;
  Key?: Wire;
  ExpressionAttributeValues?: Wire;
}

function writeOf(write: Write, factor: number): PartitionHeat | undefined {
  const table = tableIdOf(write.TableName);
  if (!table) return undefined;
  if (write.Item)
    return { table, partition: partitionOf(table, write.Item), units: factor * unitsOf(itemSize(write.Item)) };
  const key = write.Key ?? {};
  return {
    table,
    partition: partitionOf(table, key),
    units: factor * unitsOf(itemSize(key) + itemSize(write.ExpressionAttributeValues ?? {})),
  };
}

function writesOf(call: StoreCall): PartitionHeat[] {
  const body = call.body as Wire;
  switch (call.operation) {
    case 'PutItem':
    case 'DeleteItem':
      return [writeOf(body as unknown as Write, 1)].filter((w): w is PartitionHeat => w !== undefined);
    case 'UpdateItem': {
      const named = writeOf(body as unknown as Write, 1);
      const after = call.answer?.Attributes as Wire | undefined;
      if (!named || !after) return named ? [named] : [];
      return [{ ...named, units: Math.max(named.units, unitsOf(itemSize(after))) }];
    }
    case 'TransactWriteItems':
      return (body.TransactItems as Array<Record<string, Write>>)
        .flatMap((action) =>
          Object.entries(action)
            .filter(([kind]) => kind !== 'ConditionCheck')
            .map(([, write]) => writeOf(write, 2)),
        )
        .filter((w): w is PartitionHeat => w !== undefined);
    case 'BatchWriteItem':
      return Object.entries(
        body.RequestItems as Record<string, Array<{ PutRequest?: { Item: Wire }; DeleteRequest?: { Key: Wire } }>>,
      ).flatMap(([name, requests]) =>
        requests
          .map((request) =>
            writeOf({ TableName: name, Item: request.PutRequest?.Item, Key: request.DeleteRequest?.Key }, 1),
          )
          .filter((w): w is PartitionHeat => w !== undefined),
      );
    default:
      return [];
  }
}

/** Write units per table and partition key value, hottest first. */
export function partitionHeat(calls: readonly StoreCall[]): PartitionHeat[] {
  const totals = new Map<string, PartitionHeat>();
  for (const write of calls.flatMap(writesOf)) {
    const id = `${write.table}\u0000${write.partition}`;
    const into = totals.get(id) ?? { table: write.table, partition: write.partition, units: 0 };
    into.units += write.units;
    totals.set(id, into);
  }
  return [...totals.values()].sort((a, b) => b.units - a.units);
}

/**
 * Read units per partition of the point reads (GetItem, BatchGetItem): strongly consistent, one
 * unit per item up to 4 KB (the items read before forwarding are small).
 */
export function readHeat(calls: readonly StoreCall[]): PartitionHeat[] {
  const reads: PartitionHeat[] = [];
  for (const call of calls) {
    const body = call.body as Wire;
    const batches: Array<[string, Wire[]]> =
      call.operation === 'GetItem'
        ? [[String(body.TableName), [body.Key as Wire]]]
        : call.operation === 'BatchGetItem'
          ? Object.entries(body.RequestItems as Record<string, { Keys: Wire[] }>).map(([name, { Keys }]) => [
              name,
              Keys,
            ])
          : [];
    for (const [name, keys] of batches) {
      const table = tableIdOf(name);
      if (table) for (const key of keys) reads.push({ table, partition: partitionOf(table, key), units: 1 });
    }
  }
  const totals = new Map<string, PartitionHeat>();
  for (const read of reads) {
    const id = `${read.table}\u0000${read.partition}`;
    const into = totals.get(id) ?? { ...read, units: 0 };
    into.units += read.units;
    totals.set(id, into);
  }
  return [...totals.values()].sort((a, b) => b.units - a.units);
}
