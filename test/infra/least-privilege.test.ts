/**
 * Every permission of every function role in the synthesized template is one the code uses:
 * the DynamoDB actions the code sends, per table (lambda/store/table-calls.ts; test/integration/table-grants.test.ts
 * records what the code sends at run time), plus the few grants of other services that lib/permissions.ts
 * declares (a grant behind a context value is declared there with `when`). Any other action, or
 * any of these on another resource, fails the test; docs/deploy.md's table is rendered from the
 * same declaration (deploy-docs.test.ts).
 */
import type { Role } from 'aws-cdk-lib/aws-iam';
import { declaredGrants, type FunctionRole } from '../../lib/permissions';
import { actionsOf, roleStatements, synthesize, type SynthesizedStack } from './support/synth';

/** The partitions and attributes a grant is limited to, as the pair names them. */
const onPartitions = (leadingKeys: readonly string[] | undefined, attributes?: readonly string[]) =>
  (leadingKeys ? ` if every partition key is like ${JSON.stringify(leadingKeys)}` : '') +
  (attributes ? ` if it names only the attributes ${JSON.stringify(attributes)}` : '');

/** `action on resource [if …]`, one string per pair, so extra and missing grants show by name. */
function templatePairs(synth: SynthesizedStack, role: Role): string[] {
  return roleStatements(synth.template, synth.stack.getLogicalId(role.node.defaultChild as never))
    .flatMap((s) => {
      const { Condition, ...rest } = s as typeof s & { Condition?: Record<string, Record<string, string[]>> };
      // Partition limits are part of the pair; the provider key's encryption-context condition is checked elsewhere.
      const leadingKeys = Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
      const attributes = Condition?.['ForAllValues:StringEquals']?.['dynamodb:Attributes'];
      return (Array.isArray(rest.Resource) ? (rest.Resource as unknown[]) : [rest.Resource]).flatMap((resource) =>
        actionsOf(s).map(
          (action) => `${action} on ${JSON.stringify(resource)}${onPartitions(leadingKeys, attributes)}`,
        ),
      );
    })
    .sort();
}

function declaredPairs(synth: SynthesizedStack, role: FunctionRole): string[] {
  const { stack } = synth;
  return declaredGrants(stack.settings)
    .filter((g) => g.role === role)
    .flatMap((g) =>
      [g.resource(stack)]
        .flat()
        .flatMap((resource) =>
          g.actions.map(
            (a) => `${a} on ${JSON.stringify(stack.resolve(resource))}${onPartitions(g.leadingKeys, g.attributes)}`,
          ),
        ),
    )
    .sort();
}

const variants: [string, Record<string, unknown>][] = [
  ['default stage', {}],
  [
    'stage with every option',
    {
      stage: 'prod',
      provisionedConcurrency: 2,
      reservedConcurrency: 10,
      alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops',
      logRetentionDays: 30,
    },
  ],
  ['stage with Bedrock on the default ARNs', { enableBedrock: 'true' }],
  ['stage with a Cognito user pool to sign in with', { cognitoSignIn: 'true' }],
  [
    'stage signing in with its own issuer',
    {
      oidcIssuer: 'https://login.example.com',
      oidcClientId: 'proxy',
      oidcClientSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:proxy-oidc-AbCdEf',
    },
  ],
  ['stage with Bedrock in another region', { enableBedrock: 'true', bedrockRegion: 'us-east-1' }],
  [
    'stage with Bedrock on listed ARNs',
    {
      enableBedrock: 'true',
      bedrockModelArns: 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-6',
    },
  ],
];

describe.each(variants)('least privilege on the %s', (_name, context) => {
  let synth: SynthesizedStack;
  beforeAll(() => {
    synth = synthesize(context, { bundle: false });
  });
  afterAll(() => synth?.cleanup());

  it('the proxy role holds exactly the declared grants: the DynamoDB calls its code sends, per table, and its key, secret and logs', () => {
    expect(templatePairs(synth, synth.stack.proxyFunction.role)).toEqual(declaredPairs(synth, 'proxy'));
  });

  it('the stream consumer role holds exactly the declared grants: the stream, rollup writes and its dead-letter queue', () => {
    expect(templatePairs(synth, synth.stack.statsConsumer.role)).toEqual(declaredPairs(synth, 'stats consumer'));
  });

  it('no other role or policy exists that could hold a grant', () => {
    const roleId = (role: Role) => synth.stack.getLogicalId(role.node.defaultChild as never);
    expect(Object.keys(synth.template.findResources('AWS::IAM::Role')).sort()).toEqual(
      [roleId(synth.stack.proxyFunction.role), roleId(synth.stack.statsConsumer.role)].sort(),
    );
    for (const policy of Object.values(synth.template.findResources('AWS::IAM::Policy')) as {
      Properties: { Roles: unknown[] };
    }[]) {
      expect(policy.Properties.Roles).toHaveLength(1);
    }
    expect(synth.template.findResources('AWS::IAM::ManagedPolicy')).toEqual({});
  });

  it("limits the stream consumer's writes to the accounts table to the alert and budget subjects' partitions, and reads nothing else of it", () => {
    const { stack } = synth;
    const accounts = JSON.stringify(stack.resolve(stack.tables.entry('accounts').table.tableArn));
    const onAccounts = templatePairs(synth, stack.statsConsumer.role).filter((p) => p.includes(` on ${accounts}`));
    const limited =
      ' if every partition key is like ["ACCOUNT#*#ALERTS","ACCOUNT#*#G#*","ACCOUNT#*#R#*","ACCOUNT#*#T#*"]';
    expect(onAccounts).toEqual(
      [
        `dynamodb:BatchGetItem on ${accounts}`,
        `dynamodb:GetItem on ${accounts}`,
        `dynamodb:PutItem on ${accounts}${limited}`,
        `dynamodb:UpdateItem on ${accounts}${limited}`,
      ].sort(),
    );
  });

  it('never lets the proxy delete, batch-write or update the usage history', () => {
    const { stack } = synth;
    const pairs = templatePairs(synth, stack.proxyFunction.role);
    for (const id of ['usageLogs', 'usageStats'] as const) {
      const arn = JSON.stringify(stack.resolve(stack.tables.entry(id).table.tableArn));
      const onTable = pairs.filter((p) => p.endsWith(` on ${arn}`)).map((p) => p.split(' ')[0]);
      expect(onTable.length).toBeGreaterThan(0);
      expect(onTable.filter((a) => /DeleteItem|BatchWriteItem|UpdateItem/.test(a))).toEqual([]);
    }
  });

  it('lets the proxy only append to the audit log and read it: no role can change or delete an entry', () => {
    const { stack } = synth;
    const arn = JSON.stringify(stack.resolve(stack.tables.entry('audit').table.tableArn));
    const actionsOn = (role: Role) =>
      templatePairs(synth, role)
        .filter((p) => p.includes(` on ${arn}`))
        .map((p) => p.split(' on ')[0]);
    expect(actionsOn(stack.proxyFunction.role)).toEqual(['dynamodb:PutItem', 'dynamodb:Query']);
    expect(actionsOn(stack.statsConsumer.role)).toEqual([]);
  });
});
