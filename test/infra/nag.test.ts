import { Validations, type CfnElement } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { synthesize, type SynthesizedStack } from './support/synth';

/** Every acknowledgement in the construct tree, as `path: rule`, with its reason. */
function acknowledgements(root: IConstruct): { where: string; rule: string; reason: string }[] {
  return root.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) => Object.entries(m.data as Record<string, string>))
      .map(([rule, reason]) => ({ where: c.node.path, rule: rule.replace(/^annotation::/i, ''), reason })),
  );
}

// Template-only syntheses (no bundling): cdk-nag reads the CloudFormation resources, not the code.
const variants: [string, Record<string, unknown>][] = [
  ['default stage', {}],
  [
    'stage with every option',
    {
      stage: 'prod',
      provisionedConcurrency: 2,
      reservedConcurrency: 10,
      alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops',
      alarmEmail: 'ops@example.com',
      logRetentionDays: 30,
    },
  ],
  [
    'stage with its own alarm topic, an e-mail subscription and no concurrency cap',
    { stage: 'ops', alarmEmail: 'ops@example.com', reservedConcurrency: 'none', provisionedConcurrency: 1 },
  ],
  ['stage with a Cognito user pool to sign in with', { stage: 'team', cognitoSignIn: 'true' }],
];

describe.each(variants)('cdk-nag AwsSolutions on the %s', (_name, context) => {
  let synth: SynthesizedStack;
  beforeAll(() => {
    synth = synthesize(context, { bundle: false });
  });
  afterAll(() => synth?.cleanup());

  it('reports no unacknowledged finding', () => {
    const report = new AwsSolutionsChecks(synth.app).validateScope(synth.stack);
    expect(
      report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
    ).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('acknowledges only the findings reviewed, each with its own specific reason', () => {
    const acks = acknowledgements(synth.stack);
    const prefix = synth.stack.stackName;
    expect(acks.map((a) => `${a.where}: ${a.rule}`).sort()).toEqual(
      [
        `${prefix}/Admin/AdminKey: AwsSolutions-SMG4`,
        `${prefix}/StatsConsumer/AlertDeadLetters: AwsSolutions-SQS3`,
        `${prefix}/StatsConsumer/DeadLetters: AwsSolutions-SQS3`,
        `${prefix}/StatsConsumer/Role: AwsSolutions-IAM5[Resource::*]`,
        `${prefix}/StatsConsumer/Role: AwsSolutions-IAM5[Resource::<${synth.stack.getLogicalId(synth.stack.usageExport.bucket.node.defaultChild as CfnElement)}.Arn>/usage/*]`,
        `${prefix}/StatsConsumer/Role: AwsSolutions-IAM5[Resource::<${synth.stack.getLogicalId(synth.stack.usageExport.bucket.node.defaultChild as CfnElement)}.Arn>/audit/*]`,
        `${prefix}/Tables/Cache: AwsSolutions-DDB3`,
        `${prefix}/Tables/RateLimits: AwsSolutions-DDB3`,
        `${prefix}/UsageExport/Bucket: AwsSolutions-S1`,
        ...(synth.stack.signInPool ? [`${prefix}/SignIn/Pool: AwsSolutions-COG8`] : []),
      ].sort(),
    );
    for (const { reason } of acks) expect(reason.length).toBeGreaterThan(80);
    // Reasons name what they excuse: no copy-pasted boilerplate.
    expect(new Set(acks.map((a) => a.reason)).size).toBe(acks.length);
  });
});

describe('the Cognito sign-in option (docs/people.md)', () => {
  let synth: SynthesizedStack;
  beforeAll(() => {
    synth = synthesize({ cognitoSignIn: 'true' }, { bundle: false });
  });
  afterAll(() => synth?.cleanup());

  it('creates a user pool nobody signs up to alone, with a second factor, its groups, and an app client calling back to the function URL', () => {
    synth.template.resourceCountIs('AWS::Cognito::UserPool', 1);
    synth.template.hasResourceProperties('AWS::Cognito::UserPool', {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      MfaConfiguration: 'ON',
    });
    synth.template.resourceCountIs('AWS::Cognito::UserPoolGroup', 3);
    const clients = Object.values(synth.template.findResources('AWS::Cognito::UserPoolClient')) as {
      Properties: { GenerateSecret: boolean; AllowedOAuthFlows: string[]; CallbackURLs: unknown[] };
    }[];
    expect(clients).toHaveLength(1);
    expect(clients[0].Properties).toMatchObject({ GenerateSecret: true, AllowedOAuthFlows: ['code'] });
    expect(JSON.stringify(clients[0].Properties.CallbackURLs)).toContain('api/auth/callback');
    const fn = synth.stack.proxyFunction.fn.node.defaultChild as CfnElement;
    const env = (
      synth.template.toJSON().Resources[synth.stack.getLogicalId(fn)] as {
        Properties: { Environment: { Variables: Record<string, unknown> } };
      }
    ).Properties.Environment.Variables;
    expect(env.OIDC_COGNITO_USER_POOL_ID).toBeDefined();
  });
});
