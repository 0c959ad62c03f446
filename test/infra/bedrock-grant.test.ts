/**
 * Bedrock is off unless the operator turns it on (`-c enableBedrock=true`, docs/bedrock.md): only then may
 * the function's role call the two invoke actions, on the configured ARNs, and cdk-nag stays clean.
 * `-c bedrockRegion=…` (default: the stack's region) is the function's BEDROCK_REGION and the region of
 * the inference profiles granted.
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { actionsOf, policyStatements, synthesize } from './support/synth';

const bedrockStatements = (context: Record<string, unknown>) => {
  const synth = synthesize(context, { bundle: false });
  try {
    const report = new AwsSolutionsChecks(synth.app).validateScope(synth.stack);
    const statements = policyStatements(synth.template).filter((s) =>
      actionsOf(s).some((a) => a.startsWith('bedrock:')),
    );
    const proxy = Object.values(synth.template.findResources('AWS::Lambda::Function')).find((f) =>
      JSON.stringify(f).includes('KMS_KEY_ID'),
    ) as { Properties: { Environment: { Variables: Record<string, unknown> } } };
    // The stack's account as the template names it, written as `{account}` so ARNs compare as text.
    const resources = statements
      .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]))
      .map((r) =>
        typeof r === 'string'
          ? r
          : JSON.stringify(r)
              .replace(/^.*"Fn::Join":\["",\[(.*)\]\]\}$/, '$1')
              .replace(/"|,?\{"Ref":"AWS::AccountId"\},?/g, (m) => (m === '"' ? '' : '{account}')),
      );
    return {
      statements,
      resources: resources.sort(),
      bedrockRegion: proxy.Properties.Environment.Variables.BEDROCK_REGION,
      violations: report.violations.map((v) => v.ruleName),
    };
  } finally {
    synth.cleanup();
  }
};

test('without the context value, the role may not call Bedrock; the function still has its Bedrock region (a saved Bedrock API key uses it)', () => {
  expect(bedrockStatements({})).toMatchObject({ statements: [], bedrockRegion: 'eu-west-1' });
  expect(bedrockStatements({ bedrockRegion: 'us-east-1' })).toMatchObject({
    statements: [],
    bedrockRegion: 'us-east-1',
  });
});

test.each([
  ['the stack region by default', {}, 'eu-west-1'],
  ['the stack region given', { region: 'eu-central-1' }, 'eu-central-1'],
  ['bedrockRegion', { bedrockRegion: 'us-east-1' }, 'us-east-1'],
])(
  'Bedrock region from %s: the function calls that region and the inference profiles granted are its own, cdk-nag clean',
  (_, context, region) => {
    const { resources, bedrockRegion, violations } = bedrockStatements({ enableBedrock: 'true', ...context });
    expect(bedrockRegion).toBe(region);
    expect(resources).toEqual([
      'arn:aws:bedrock:*::foundation-model/*',
      `arn:aws:bedrock:${region}:{account}:inference-profile/*`,
    ]);
    expect(violations).toEqual([]);
  },
);

test('{region} in bedrockModelArns stands for the Bedrock region', () => {
  const { statements } = bedrockStatements({
    enableBedrock: 'true',
    bedrockRegion: 'us-west-2',
    bedrockModelArns: 'arn:aws:bedrock:{region}::foundation-model/anthropic.claude-sonnet-4-6',
  });
  expect(statements[0]!.Resource).toBe('arn:aws:bedrock:us-west-2::foundation-model/anthropic.claude-sonnet-4-6');
});

test('a bedrockRegion that is no region name stops the synthesis', () => {
  expect(() => synthesize({ bedrockRegion: 'virginia' }, { bundle: false })).toThrow('bedrockRegion');
});

test('with bedrock=true: InvokeModel and InvokeModelWithResponseStream on the default ARNs, cdk-nag clean', () => {
  const { statements, violations } = bedrockStatements({ enableBedrock: 'true' });
  expect(statements).toHaveLength(1);
  expect(actionsOf(statements[0]!).sort()).toEqual(['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream']);
  expect(JSON.stringify(statements[0]!.Resource)).toContain('arn:aws:bedrock:*::foundation-model/*');
  expect(JSON.stringify(statements[0]!.Resource)).toContain(':inference-profile/*');
  expect(violations).toEqual([]);
});

test('bedrockModelArns narrows the grant to the listed ARNs', () => {
  const arns = [
    'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-6',
    'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-6',
  ];
  const { statements, violations } = bedrockStatements({ enableBedrock: 'true', bedrockModelArns: arns.join(',') });
  expect([...(statements[0]!.Resource as string[])].sort()).toEqual([...arns].sort());
  expect(violations).toEqual([]);
});

test('a value that is no Bedrock ARN stops the synthesis', () => {
  expect(() =>
    synthesize({ enableBedrock: 'true', bedrockModelArns: 'arn:aws:s3:::bucket/*' }, { bundle: false }),
  ).toThrow('bedrockModelArns');
});
