import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { CfnNamedQuery, CfnWorkGroup } from 'aws-cdk-lib/aws-athena';
import { CfnDatabase, CfnTable } from 'aws-cdk-lib/aws-glue';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { AUDIT_COLUMNS, DAY_PARTITION, USAGE_COLUMNS, type ColumnType } from '../../lambda/export/columns';
import { AUDIT_PREFIX } from '../../lambda/export/audit-export';
import { USAGE_PREFIX } from '../../lambda/export/usage-export';
import { AUDIT_TABLE, querySql, USAGE_QUERIES, USAGE_TABLE } from '../usage-queries';

type Column = { name: string; type: ColumnType };

/** Where the workgroup writes query results, in the same bucket; they expire after a week. */
export const RESULTS_PREFIX = 'athena-results/';
export const RESULTS_DAYS = 7;
/** The first day partition projection knows; no row is exported from before it. */
export const FIRST_EXPORT_DAY = '2026-01-01';
/** The most one query may scan (10 GB, $0.05 at Athena's price): years of rows, never a runaway. */
export const BYTES_SCANNED_CUTOFF = 10 * 1024 ** 3;

export interface UsageExportProps {
  namePrefix: string;
  /** Exported rows expire after this many days (`-c usageExportDays`). */
  retentionDays: number;
}

/**
 * The usage rows and audit entries in S3 for Athena (docs/alerts.md, "Usage in Athena"): the bucket
 * the stream consumer writes one gzipped JSON Lines object per day and batch to, under `usage/` and
 * `audit/`, a Glue table over each (its columns, the day projected as `dt`, so no partition is ever
 * added), a workgroup whose results land in the same bucket, and the named queries of
 * lib/usage-queries.ts. Audit entries have no expiry rule: the log is kept.
 */
export class UsageExport extends Construct {
  readonly bucket: Bucket;
  readonly database: CfnDatabase;
  readonly table: CfnTable;
  readonly auditTable: CfnTable;
  readonly workGroup: CfnWorkGroup;
  readonly namedQueries: CfnNamedQuery[];

  constructor(scope: Construct, id: string, props: UsageExportProps) {
    super(scope, id);
    // S3-managed keys (docs/decisions.md): no KMS call per object written or read by Athena, and a
    // reader needs s3:GetObject only. The rows hold no credential (docs/security.md).
    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      // The usage history outlives the stack, as the usage-logs table does.
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'usage-rows', prefix: USAGE_PREFIX, expiration: Duration.days(props.retentionDays) },
        { id: 'athena-results', prefix: RESULTS_PREFIX, expiration: Duration.days(RESULTS_DAYS) },
        { id: 'unfinished-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "The export bucket is written by the stream consumer's role alone, on one prefix, and read by Athena: server access logs would need a second bucket for a record CloudTrail data events give when an audit needs it.",
    });

    const databaseName = `${props.namePrefix.replace(/-/g, '_')}usage`;
    const catalogId = Stack.of(this).account;
    this.database = new CfnDatabase(this, 'Database', {
      catalogId,
      databaseInput: { name: databaseName, description: 'Usage rows of the AI usage proxy, exported daily' },
    });
    const dailyTable = (id: string, name: string, description: string, prefix: string, columns: readonly Column[]) => {
      const location = `s3://${this.bucket.bucketName}/${prefix}`;
      const table = new CfnTable(this, id, {
        catalogId,
        databaseName,
        tableInput: {
          name,
          description,
          tableType: 'EXTERNAL_TABLE',
          parameters: {
            classification: 'json',
            compressionType: 'gzip',
            // Partition projection: Athena computes the day folders, so none is ever registered.
            'projection.enabled': 'true',
            [`projection.${DAY_PARTITION}.type`]: 'date',
            [`projection.${DAY_PARTITION}.format`]: 'yyyy-MM-dd',
            [`projection.${DAY_PARTITION}.range`]: `${FIRST_EXPORT_DAY},NOW`,
            [`projection.${DAY_PARTITION}.interval`]: '1',
            [`projection.${DAY_PARTITION}.interval.unit`]: 'DAYS',
            'storage.location.template': `${location}${DAY_PARTITION}=\${${DAY_PARTITION}}/`,
          },
          partitionKeys: [{ name: DAY_PARTITION, type: 'string' }],
          storageDescriptor: {
            location,
            columns: columns.map(({ name, type }) => ({ name, type })),
            inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
            outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
            serdeInfo: { serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe' },
          },
        },
      });
      table.addResourceDependency(this.database);
      return table;
    };
    this.table = dailyTable(
      'Table',
      USAGE_TABLE,
      'One row per proxied request (docs/usage-and-pricing.md), partitioned by UTC day',
      USAGE_PREFIX,
      USAGE_COLUMNS,
    );
    this.auditTable = dailyTable(
      'AuditTable',
      AUDIT_TABLE,
      'One entry per management change (docs/people.md), partitioned by UTC day',
      AUDIT_PREFIX,
      AUDIT_COLUMNS,
    );

    this.workGroup = new CfnWorkGroup(this, 'WorkGroup', {
      name: `${props.namePrefix}usage`,
      description: 'Queries over the exported usage rows',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: BYTES_SCANNED_CUTOFF,
        resultConfiguration: {
          outputLocation: `s3://${this.bucket.bucketName}/${RESULTS_PREFIX}`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });
    this.namedQueries = USAGE_QUERIES.map(
      (query) =>
        new CfnNamedQuery(this, query.name, {
          name: query.name,
          description: query.description,
          database: databaseName,
          workGroup: this.workGroup.ref,
          queryString: querySql(query, 'athena'),
        }),
    );
    for (const query of this.namedQueries) query.addResourceDependency(this.table);
  }

  /** The usage objects' keys, which the consumer writes: PutObject there and nowhere else. */
  get usageObjectsArn(): string {
    return this.bucket.arnForObjects(`${USAGE_PREFIX}*`);
  }

  /** The audit entries' keys, which the consumer writes beside the usage rows. */
  get auditObjectsArn(): string {
    return this.bucket.arnForObjects(`${AUDIT_PREFIX}*`);
  }

  grantExport(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['s3:PutObject'], resources: [this.usageObjectsArn, this.auditObjectsArn] }),
    );
  }
}
