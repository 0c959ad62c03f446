/**
 * The Athena side of docs/alerts.md ("Usage in Athena"): the export bucket (encrypted, private, TLS
 * only, rows expiring after `usageExportDays`), the Glue table with the exported row's columns and
 * the day projected, the workgroup and the named queries whose text is lib/usage-queries.ts's, and
 * the consumer told where to write.
 */
import { AUDIT_COLUMNS, USAGE_COLUMNS } from '../../lambda/export/columns';
import { RESULTS_DAYS } from '../../lib/constructs/usage-export';
import { DEFAULTS } from '../../lib/settings';
import { AUDIT_TABLE, querySql, USAGE_QUERIES, USAGE_TABLE } from '../../lib/usage-queries';
import { single, synthesize, type SynthesizedStack } from './support/synth';

let plain: SynthesizedStack;
let prod: SynthesizedStack;
beforeAll(() => {
  plain = synthesize({}, { bundle: false });
  prod = synthesize({ stage: 'prod', usageExportDays: 90 }, { bundle: false });
});
afterAll(() => {
  plain?.cleanup();
  prod?.cleanup();
});

const bucketOf = (synth: SynthesizedStack) => single(synth.template, 'AWS::S3::Bucket');
const resolved = (synth: SynthesizedStack, value: unknown) => JSON.stringify(synth.stack.resolve(value));

test('the bucket is encrypted with S3-managed keys, blocks every public access, owns its objects and is kept by cdk destroy', () => {
  const bucket = bucketOf(plain);
  expect(bucket.DeletionPolicy).toBe('Retain');
  expect(bucket.Properties).toMatchObject({
    BucketEncryption: {
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    },
    PublicAccessBlockConfiguration: {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    },
    OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
  });
});

test('its policy refuses every request without TLS', () => {
  const policy = single(plain.template, 'AWS::S3::BucketPolicy');
  const statements = (policy.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement;
  expect(statements).toContainEqual(
    expect.objectContaining({
      Effect: 'Deny',
      Action: 's3:*',
      Principal: { AWS: '*' },
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    }),
  );
});

test('exported rows expire after usageExportDays (two years by default), query results after a week', () => {
  const rules = (synth: SynthesizedStack) =>
    (bucketOf(synth).Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
  expect(rules(plain)).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ Id: 'usage-rows', Prefix: 'usage/', ExpirationInDays: DEFAULTS.usageExportDays }),
      expect.objectContaining({ Id: 'athena-results', Prefix: 'athena-results/', ExpirationInDays: RESULTS_DAYS }),
      expect.objectContaining({ Id: 'unfinished-uploads', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
    ]),
  );
  expect(rules(prod)).toContainEqual(expect.objectContaining({ Id: 'usage-rows', ExpirationInDays: 90 }));
  expect(() => synthesize({ usageExportDays: 0 }, { bundle: false })).toThrow(/"usageExportDays"/);
});

test('the Glue table has the exported columns, typed, JSON read by the OpenX SerDe, and the day projected as dt', () => {
  const database = single(plain.template, 'AWS::Glue::Database');
  expect(database.Properties.DatabaseInput).toMatchObject({ Name: 'dev_ai_usage_proxy_usage' });
  expect(single(prod.template, 'AWS::Glue::Database').Properties.DatabaseInput).toMatchObject({
    Name: 'prod_ai_usage_proxy_usage',
  });
  const table = single(
    plain.template,
    'AWS::Glue::Table',
    (p) => (p.TableInput as { Name: string }).Name === USAGE_TABLE,
  );
  const input = table.Properties.TableInput as {
    Name: string;
    PartitionKeys: unknown[];
    Parameters: Record<string, string>;
    StorageDescriptor: { Columns: unknown[]; Location: unknown; SerdeInfo: { SerializationLibrary: string } };
  };
  expect(table.Properties.DatabaseName).toBe('dev_ai_usage_proxy_usage');
  expect(input.Name).toBe(USAGE_TABLE);
  expect(input.StorageDescriptor.Columns).toEqual(USAGE_COLUMNS.map(({ name, type }) => ({ Name: name, Type: type })));
  expect(input.StorageDescriptor.SerdeInfo.SerializationLibrary).toBe('org.openx.data.jsonserde.JsonSerDe');
  expect(input.PartitionKeys).toEqual([{ Name: 'dt', Type: 'string' }]);
  expect(input.Parameters).toMatchObject({
    'projection.enabled': 'true',
    'projection.dt.type': 'date',
    'projection.dt.format': 'yyyy-MM-dd',
    'projection.dt.interval': '1',
    'projection.dt.interval.unit': 'DAYS',
  });
  expect(input.Parameters['projection.dt.range']).toMatch(/^\d{4}-\d{2}-\d{2},NOW$/);
  const bucketRef = resolved(plain, plain.stack.usageExport.bucket.bucketName);
  expect(resolved(plain, input.StorageDescriptor.Location)).toContain(bucketRef);
  expect(resolved(plain, input.StorageDescriptor.Location)).toContain('/usage/');
  expect(resolved(plain, input.Parameters['storage.location.template'])).toContain('/usage/dt=${dt}/');
});

test('the audit entries have their own Glue table over audit/, the day projected as dt, and no expiry rule', () => {
  const table = single(
    plain.template,
    'AWS::Glue::Table',
    (p) => (p.TableInput as { Name: string }).Name === AUDIT_TABLE,
  );
  const input = table.Properties.TableInput as {
    Parameters: Record<string, string>;
    PartitionKeys: unknown[];
    StorageDescriptor: { Columns: unknown[]; Location: unknown };
  };
  expect(table.Properties.DatabaseName).toBe('dev_ai_usage_proxy_usage');
  expect(input.StorageDescriptor.Columns).toEqual(AUDIT_COLUMNS.map(({ name, type }) => ({ Name: name, Type: type })));
  expect(input.PartitionKeys).toEqual([{ Name: 'dt', Type: 'string' }]);
  expect(resolved(plain, input.StorageDescriptor.Location)).toContain('/audit/');
  expect(resolved(plain, input.Parameters['storage.location.template'])).toContain('/audit/dt=${dt}/');
  const rules = (bucketOf(plain).Properties.LifecycleConfiguration as { Rules: { Prefix?: string }[] }).Rules;
  // Every expiry rule names a prefix, and none covers audit/.
  for (const rule of rules) expect(rule.Prefix === undefined || !'audit/'.startsWith(rule.Prefix)).toBe(true);
});

test('the workgroup encrypts its results in the bucket, enforces that and caps what a query scans', () => {
  const workGroup = single(plain.template, 'AWS::Athena::WorkGroup');
  expect(workGroup.Properties).toMatchObject({
    Name: 'dev-ai-usage-proxy-usage',
    RecursiveDeleteOption: true,
    WorkGroupConfiguration: {
      EnforceWorkGroupConfiguration: true,
      BytesScannedCutoffPerQuery: 10 * 1024 ** 3,
      ResultConfiguration: { EncryptionConfiguration: { EncryptionOption: 'SSE_S3' } },
    },
  });
  const output = resolved(
    plain,
    (workGroup.Properties.WorkGroupConfiguration as { ResultConfiguration: { OutputLocation: unknown } })
      .ResultConfiguration.OutputLocation,
  );
  expect(output).toContain('/athena-results/');
});

test('the named queries are those of lib/usage-queries.ts in their Athena form, in the workgroup and database', () => {
  const named = Object.values(plain.template.findResources('AWS::Athena::NamedQuery')) as {
    Properties: { Name: string; Database: string; QueryString: string; WorkGroup: unknown };
  }[];
  const workGroupId = single(plain.template, 'AWS::Athena::WorkGroup').logicalId;
  expect(named.map((q) => q.Properties.Name).sort()).toEqual(USAGE_QUERIES.map((q) => q.name).sort());
  for (const query of USAGE_QUERIES) {
    const found = named.find((q) => q.Properties.Name === query.name)!;
    expect(found.Properties).toMatchObject({
      Database: 'dev_ai_usage_proxy_usage',
      QueryString: querySql(query, 'athena'),
      WorkGroup: { Ref: workGroupId },
    });
    expect(found.Properties.QueryString).toContain(`FROM ${USAGE_TABLE} u`);
  }
});

test('the consumer is told the bucket; the bucket and workgroup are stack outputs', () => {
  const fn = single(
    plain.template,
    'AWS::Lambda::Function',
    (p) => p.FunctionName === 'dev-ai-usage-proxy-stats-consumer',
  );
  const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  expect(resolved(plain, env.USAGE_EXPORT_BUCKET)).toBe(resolved(plain, plain.stack.usageExport.bucket.bucketName));
  const outputs = plain.template.toJSON().Outputs as Record<string, unknown>;
  expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['UsageExportBucketName', 'UsageWorkGroup']));
});
