/**
 * Write units as DynamoDB bills them, from a write request's own items: DynamoDB Local's
 * ReturnConsumedCapacity reports a transaction's units per table (two updates of the accounts table
 * come back as 2 units, not 4), so the counter prices the items it sees instead.
 *
 * Sizes follow DynamoDB's item-size rules: each attribute's name in UTF-8 bytes plus its value
 * (a string's UTF-8 bytes, a number's 1 byte per two significant digits plus 1, 1 byte for a
 * boolean or null, 3 bytes plus 1 per element and the elements for a map or list). A write is
 * billed 1 unit per started KB, a transaction's write 2 units per started KB of each item it names.
 * An Update names only the attributes it changes, so its item is priced at what the request
 * carries: exact for the small counter items the request path updates, a lower bound otherwise.
 */
type Wire = Record<string, unknown>;

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

function numberBytes(text: string): number {
  const digits = text.replace(/^[-+]/, '').replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

function valueBytes(value: unknown): number {
  if (!value || typeof value !== 'object') return 0;
  const [type, inner] = Object.entries(value as Wire)[0] ?? [];
  switch (type) {
    case 'S':
      return utf8(String(inner));
    case 'N':
      return numberBytes(String(inner));
    case 'B':
      return Buffer.from(String(inner), 'base64').length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (inner as string[]).reduce((sum, s) => sum + utf8(s), 0);
    case 'NS':
      return (inner as string[]).reduce((sum, n) => sum + numberBytes(n), 0);
    case 'L':
      return 3 + (inner as unknown[]).reduce<number>((sum, element) => sum + 1 + valueBytes(element), 0);
    case 'M':
      return 3 + Object.entries(inner as Wire).reduce((sum, [name, element]) => sum + 1 + utf8(name) + valueBytes(element), 0);
    default:
      return 0;
  }
}

/** An item's size in bytes, from its wire form (`{ name: { S: "…" } }`). */
export function itemBytes(item: Wire | undefined): number {
  return Object.entries(item ?? {}).reduce((sum, [name, value]) => sum + utf8(name) + valueBytes(value), 0);
}

const kilobytes = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** What an Update, Delete or condition check names of its item: the key and the values it writes. */
function namedBytes(action: Wire): number {
  return itemBytes(action.Key as Wire) + itemBytes(action.ExpressionAttributeValues as Wire);
}

export interface BilledWrite {
  units: number;
  /** Items a transaction names (0 for other calls). */
  transactionItems: number;
}

/** Billed write units of one call, or undefined when the operation is not a write this counts. */
export function billedWrite(operation: string, request: Wire): BilledWrite | undefined {
  switch (operation) {
    case 'PutItem':
      return { units: kilobytes(itemBytes(request.Item as Wire)), transactionItems: 0 };
    case 'UpdateItem':
    case 'DeleteItem':
      return { units: kilobytes(namedBytes(request)), transactionItems: 0 };
    case 'BatchWriteItem': {
      const writes = Object.values((request.RequestItems ?? {}) as Record<string, Wire[]>).flat();
      const units = writes.reduce((sum, write) => sum + kilobytes(itemBytes(((write.PutRequest as Wire | undefined)?.Item as Wire) ?? ((write.DeleteRequest as Wire | undefined)?.Key as Wire))), 0);
      return { units, transactionItems: 0 };
    }
    case 'TransactWriteItems': {
      const actions = (request.TransactItems ?? []) as Wire[];
      const units = actions.reduce((sum, entry) => {
        const [kind, action] = Object.entries(entry)[0] as [string, Wire];
        return sum + 2 * kilobytes(kind === 'Put' ? itemBytes(action.Item as Wire) : namedBytes(action));
      }, 0);
      return { units, transactionItems: actions.length };
    }
    default:
      return undefined;
  }
}
