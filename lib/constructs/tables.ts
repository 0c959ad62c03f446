import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { pascalCase } from '../names';
import { TABLES, type TableId, type TableShape } from '../../lambda/store/tables';

export interface ProxyTable {
  id: TableId;
  shape: TableShape;
  table: Table;
}

/**
 * Every table the runtime uses, built from the same shapes the local server creates its tables
 * from (lambda/store/tables.ts), so keys and TTL attributes can't drift between the two.
 */
export class ProxyTables extends Construct {
  readonly all: ProxyTable[];

  constructor(scope: Construct, id: string, props: { namePrefix: string }) {
    super(scope, id);
    this.all = (Object.entries(TABLES) as [TableId, TableShape][]).map(([tableId, shape]) => ({
      id: tableId,
      shape,
      table: buildTable(this, tableId, shape, props.namePrefix),
    }));
  }

  entry(id: TableId): ProxyTable {
    const found = this.all.find((t) => t.id === id);
    if (!found) throw new Error(`no table ${id}`);
    return found;
  }
}

function buildTable(scope: Construct, id: TableId, shape: TableShape, namePrefix: string): Table {
  const table = new Table(scope, pascalCase(id), {
    // A fixed name lets an operator find the table in the console; the stage prefix keeps stages apart.
    tableName: `${namePrefix}${shape.logicalName}`,
    partitionKey: { name: shape.partitionKey, type: AttributeType.STRING },
    sortKey: shape.sortKey
      ? { name: shape.sortKey.name, type: shape.sortKey.type === 'N' ? AttributeType.NUMBER : AttributeType.STRING }
      : undefined,
    // Traffic follows the users' AI calls: bursty and often idle, so no capacity to plan or pay for while idle.
    billingMode: BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: shape.ttlAttribute,
    // The rollups are folded from the new rows on this stream (lib/constructs/stats-consumer.ts).
    stream: shape.stream === 'NEW_IMAGE' ? StreamViewType.NEW_IMAGE : undefined,
    // AWS-owned key: free and transparent. Provider keys are already envelope-encrypted under our own
    // KMS key before they reach the table, so a customer-managed table key would add cost, not protection.
    encryption: TableEncryption.DEFAULT,
    // Accounts, keys and usage can't be rebuilt: back them up continuously and survive `cdk destroy`.
    pointInTimeRecoverySpecification: shape.durable ? { pointInTimeRecoveryEnabled: true } : undefined,
    deletionProtection: shape.durable,
    removalPolicy: shape.durable ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  });
  if (!shape.durable) {
    Validations.of(table).acknowledge({
      id: 'AwsSolutions-DDB3',
      reason: `The ${shape.logicalName} table holds only short-lived, rebuildable data (expiring via TTL on ${shape.ttlAttribute ?? 'its items'}); restoring it from a backup would bring back stale entries, so point-in-time recovery would cost money and protect nothing.`,
    });
  }
  return table;
}
