import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROVIDER_CATALOG } from '../../lambda/providers/catalog';
import { TABLES, type TableShape } from '../../lambda/store/tables';
import { ADMIN_KEY_LENGTH } from '../../lib/constructs/admin-secret';
import { ENCRYPTION_CONTEXT_CONDITION } from '../../lib/constructs/provider-key';
import { ALLOCATOR_ENVIRONMENT, ESM_REQUIRE_BANNER } from '../../lib/constructs/proxy-function';
import { tableOutputName } from '../../lib/names';
import { DEFAULTS } from '../../lib/settings';
import { actionsOf, policyStatements, roleStatements, single } from './support/synth';
import { defaultStack } from './support/stack-resources';

const SHAPES = Object.values(TABLES) as TableShape[];

const { stack, table, fn, roleOf, key, secret } = defaultStack();

describe('DynamoDB tables, built from lambda/store/tables.ts', () => {
  it('has exactly one table per shape', () => {
    stack.synth.template.resourceCountIs('AWS::DynamoDB::Table', SHAPES.length);
  });

  it.each(SHAPES.map((s) => [s.logicalName, s] as const))('%s: keys, TTL, on-demand billing', (_name, shape) => {
    const { Properties: p } = table(shape);
    const keySchema = [{ AttributeName: shape.partitionKey, KeyType: 'HASH' }];
    const attributes = [{ AttributeName: shape.partitionKey, AttributeType: 'S' }];
    if (shape.sortKey) {
      keySchema.push({ AttributeName: shape.sortKey.name, KeyType: 'RANGE' });
      attributes.push({ AttributeName: shape.sortKey.name, AttributeType: shape.sortKey.type });
    }
    expect(p.KeySchema).toEqual(keySchema);
    expect(p.AttributeDefinitions).toEqual(attributes);
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
    expect(p.TimeToLiveSpecification).toEqual(
      shape.ttlAttribute ? { AttributeName: shape.ttlAttribute, Enabled: true } : undefined,
    );
    // AWS-owned key (free); provider keys are envelope-encrypted under our own key before they get here.
    expect(p.SSESpecification).toEqual({ SSEEnabled: false });
  });

  it('accounts: monthly budget spend counters expire through TTL on expires_at (test/integration/store/budget-store.test.ts checks the attribute written)', () => {
    expect(table(TABLES.accounts).Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expires_at',
      Enabled: true,
    });
  });

  it.each(SHAPES.map((s) => [s.logicalName, s] as const))(
    '%s: durable data has PITR, deletion protection and survives the stack',
    (_name, shape) => {
      const t = table(shape);
      if (shape.durable) {
        expect(t.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
        expect(t.Properties.DeletionProtectionEnabled).toBe(true);
        expect(t.DeletionPolicy).toBe('Retain');
      } else {
        expect(t.Properties.PointInTimeRecoverySpecification).toBeUndefined();
        expect(t.Properties.DeletionProtectionEnabled).toBe(false);
        expect(t.DeletionPolicy).toBe('Delete');
      }
    },
  );

  it('gives the function each physical table name under the variable the runtime reads', () => {
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    for (const shape of SHAPES) expect(env[shape.envVar]).toEqual({ Ref: table(shape).logicalId });
  });

  it('grants the proxy item-level access on each table by ARN, nothing table-wide or wildcarded (the actions: least-privilege.test.ts)', () => {
    const dynamo = roleStatements(stack.synth.template, roleOf(fn())).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('dynamodb:')),
    );
    const granted = dynamo.flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]));
    // A table may take two statements (its writes limited by a condition), never another resource.
    expect(new Set(granted.map((resource) => JSON.stringify(resource))).size).toBe(SHAPES.length);
    expect(granted).toEqual(
      expect.arrayContaining(SHAPES.map((shape) => ({ 'Fn::GetAtt': [table(shape).logicalId, 'Arn'] }))),
    );
    for (const s of dynamo)
      for (const action of actionsOf(s))
        expect(action).toMatch(/^dynamodb:(GetItem|BatchGetItem|Query|PutItem|UpdateItem|DeleteItem|BatchWriteItem)$/);
  });

  it('streams new usage rows and audit entries (NEW_IMAGE) and no other table', () => {
    for (const shape of SHAPES)
      expect(table(shape).Properties.StreamSpecification).toEqual(
        shape.stream ? { StreamViewType: shape.stream } : undefined,
      );
    expect(SHAPES.filter((shape) => shape.stream).map((shape) => shape.logicalName)).toEqual(['usage-logs', 'audit']);
  });
});

describe('KMS key for provider keys', () => {
  it('rotates, and outlives the stack like the table holding its ciphertexts', () => {
    expect(key().Properties.EnableKeyRotation).toBe(true);
    expect(key().DeletionPolicy).toBe('Retain');
    stack.synth.template.hasResourceProperties('AWS::KMS::Alias', {
      AliasName: 'alias/dev-ai-usage-proxy-provider-keys',
    });
  });

  it('grants exactly Decrypt and GenerateDataKey, on this key, bound to the account/provider encryption context', () => {
    const kms = roleStatements(stack.synth.template, roleOf(fn())).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('kms:')),
    );
    const keyArn = { 'Fn::GetAtt': [key().logicalId, 'Arn'] };
    const condition = {
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['account_id', 'provider'] },
      Null: { 'kms:EncryptionContext:account_id': 'false', 'kms:EncryptionContext:provider': 'false' },
    };
    expect(ENCRYPTION_CONTEXT_CONDITION).toEqual(condition);
    expect(kms).toEqual([
      { Sid: 'OpenStoredProviderKeys', Effect: 'Allow', Action: 'kms:Decrypt', Resource: keyArn, Condition: condition },
      {
        Sid: 'SealNewProviderKeys',
        Effect: 'Allow',
        Action: 'kms:GenerateDataKey',
        Resource: keyArn,
        Condition: condition,
      },
    ]);
  });

  it('hands the key to the runtime', () => {
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [key().logicalId, 'Arn'] });
  });
});

describe('admin key secret', () => {
  it('is generated at deploy time as a plain string of letters and digits', () => {
    const generate = secret().Properties.GenerateSecretString as Record<string, unknown>;
    expect(generate).toEqual({ PasswordLength: ADMIN_KEY_LENGTH, ExcludePunctuation: true, IncludeSpace: false });
    expect(ADMIN_KEY_LENGTH).toBeGreaterThanOrEqual(40);
    // No JSON template: the SecretString is the key itself.
    expect(generate.SecretStringTemplate).toBeUndefined();
    expect(secret().Properties.SecretString).toBeUndefined();
  });

  it('is readable by the function and nothing more', () => {
    const statements = policyStatements(stack.synth.template).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('secretsmanager:')),
    );
    expect(statements).toEqual([
      {
        Sid: 'ReadAdminKey',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: { Ref: secret().logicalId },
      },
    ]);
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.ADMIN_SECRET_ARN).toEqual({ Ref: secret().logicalId });
  });
});

describe('function', () => {
  it('runs Node 22+ on arm64 with the chosen memory, a timeout well past the upstream limit, and a concurrency cap', () => {
    const p = fn().Properties;
    expect(Number(String(p.Runtime).match(/^nodejs(\d+)\.x$/)?.[1])).toBeGreaterThanOrEqual(22);
    expect(p.Architectures).toEqual(['arm64']);
    expect(p.MemorySize).toBe(DEFAULTS.memoryMb);
    expect(p.Timeout).toBe(900);
    expect(p.Handler).toBe('index.handler');
    // A cap by default (docs/deploy.md, "Concurrency cap and timeout").
    expect(p.ReservedConcurrentExecutions).toBe(DEFAULTS.reservedConcurrency);
  });

  it('gets the runtime settings and nothing secret in its environment', () => {
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject({ CORS_ALLOWED_ORIGINS: '', UPSTREAM_TIMEOUT_MS: '30000', RATE_LIMIT_PER_MINUTE: '100' });
    expect(Number(env.UPSTREAM_TIMEOUT_MS) / 1000).toBeLessThan(Number(fn().Properties.Timeout) / 10);
    expect(env.LOG_RETENTION_DAYS).toBe(String(DEFAULTS.logRetentionDays));
    expect(env.NODE_OPTIONS).toBeUndefined();
    // Large blocks in mappings of their own, returned when freed (docs/deploy.md, "Memory").
    expect(env).toMatchObject(ALLOCATOR_ENVIRONMENT);
    expect(env.ADMIN_KEY).toBeUndefined();
  });

  it('sets no provider base URL: in AWS every catalog provider uses its default (docs/providers.md)', () => {
    const env = (fn().Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(Object.keys(env).length).toBeGreaterThan(0);
    for (const provider of PROVIDER_CATALOG) expect(env[provider.upstream.envVar]).toBeUndefined();
  });

  it('logs JSON lines to its own log group with a retention', () => {
    const logGroupId = (fn().Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    const logs = {
      logicalId: logGroupId,
      ...(stack.synth.template.toJSON().Resources[logGroupId] as { Properties: Record<string, unknown> }),
    };
    expect(logs.Properties.RetentionInDays).toBe(30);
    expect(fn().Properties.LoggingConfig).toEqual({
      LogFormat: 'JSON',
      ApplicationLogLevel: 'INFO',
      SystemLogLevel: 'WARN',
      LogGroup: { Ref: logs.logicalId },
    });
  });

  it('has a role with no managed policies and no wildcard resources', () => {
    const role = single(stack.synth.template, 'AWS::IAM::Role', (p) => String(p.Description).endsWith('-function'));
    expect(role.logicalId).toBe(roleOf(fn()));
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = roleStatements(stack.synth.template, role.logicalId);
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) {
      expect(JSON.stringify(s.Resource)).not.toContain('*');
      expect(actionsOf(s).join(' ')).not.toContain('*');
    }
  });

  it('is bundled as minified ESM with the SDK and the dashboard inside and a require shim', () => {
    const code = fn().Properties.Code as { S3Key: string };
    const assetDir = path.join(stack.synth.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    expect(fs.readdirSync(assetDir)).toEqual(['index.mjs']);
    const bundle = fs.readFileSync(path.join(assetDir, 'index.mjs'), 'utf8');
    expect(bundle.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    expect(bundle).toMatch(/export\s*\{[^}]*\bas handler\b/);
    // Statement-level imports are the only way an ESM bundle reaches outside itself: Node built-ins only.
    const imported = [
      ...bundle.matchAll(
        /(?:^|[;\n])\s*import\s*(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s*[\w$]+)?\s*(?:from\s*)?["']([^"']+)["']/g,
      ),
    ].map((m) => m[1]);
    expect(imported.filter((specifier) => !specifier.startsWith('node:'))).toEqual([]);
    // The pinned SDK clients are inside: their service identifiers are in the code.
    for (const marker of ['DynamoDB_20120810', 'TrentService', 'secretsmanager'])
      expect(bundle.includes(marker)).toBe(true);
    // The dashboard and version that scripts/build.mjs injects are injected here too.
    expect(bundle.includes('virtual:dashboard-assets')).toBe(false);
    expect(bundle.includes('<!doctype html>')).toBe(true);
    expect(bundle.includes('__PROXY_VERSION__')).toBe(false);
    // A regression guard, not a target.
    expect(Buffer.byteLength(bundle)).toBeLessThan(3 * 1024 * 1024);
  });

  it('leaves nothing of the bundling step behind in the cloud assembly', () => {
    expect(fs.readdirSync(stack.synth.outdir).filter((name) => name.includes('dashboard-assets'))).toEqual([]);
  });
});

describe('function URL', () => {
  it('streams responses, leaves auth to the app and CORS to the app, and is served from the live alias', () => {
    const url = single(stack.synth.template, 'AWS::Lambda::Url');
    expect(url.Properties).toEqual({
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      TargetFunctionArn: { 'Fn::GetAtt': [fn().logicalId, 'Arn'] },
      Qualifier: 'live',
    });
  });

  it('is invokable by anyone only through the URL', () => {
    stack.synth.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      FunctionUrlAuthType: 'NONE',
      Principal: '*',
    });
    stack.synth.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      InvokedViaFunctionUrl: true,
      Principal: '*',
    });
    stack.synth.template.resourceCountIs('AWS::Lambda::Permission', 2);
  });
});

describe('outputs', () => {
  it('give the proxy base, the dashboard, the admin secret and every table name', () => {
    const urlId = single(stack.synth.template, 'AWS::Lambda::Url').logicalId;
    const functionUrl = { 'Fn::GetAtt': [urlId, 'FunctionUrl'] };
    stack.synth.template.hasOutput('ProxyBaseUrl', { Value: { 'Fn::Join': ['', [functionUrl, 'api/proxy']] } });
    stack.synth.template.hasOutput('DashboardUrl', { Value: functionUrl });
    stack.synth.template.hasOutput('AdminSecretArn', { Value: { Ref: secret().logicalId } });
    for (const shape of SHAPES)
      stack.synth.template.hasOutput(tableOutputName(shape.logicalName), { Value: { Ref: table(shape).logicalId } });
  });
});
