/**
 * Bedrock is off unless the operator turns it on (`-c enableBedrock=true`, docs/bedrock.md): only then may
 * the function's role call the two invoke actions, on the configured ARNs, and cdk-nag stays clean.
 */
import { AwsSolutionsChecks } from 'cdk-nag';
import { actionsOf, policyStatements, synthesize } from './support/synth';

const bedrockStatements = (context: Record<string, unknown>) => {
  const synth = synthesize(context, { bundle: false });
  try {
    const report = new AwsSolutionsChecks(synth.app).validateScope(synth.stack);
    const statements = policyStatements(synth.template).filter((s) => actionsOf(s).some((a) => a.startsWith('bedrock:')));
    return { statements, violations: report.violations.map((v) => v.ruleName) };
  } finally {
    synth.cleanup();
  }
};

test('without the context value, the role may not call Bedrock', () => {
  expect(bedrockStatements({}).statements).toEqual([]);
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
  const arns = ['arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-sonnet-4-6', 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-6'];
  const { statements, violations } = bedrockStatements({ enableBedrock: 'true', bedrockModelArns: arns.join(',') });
  expect([...(statements[0]!.Resource as string[])].sort()).toEqual([...arns].sort());
  expect(violations).toEqual([]);
});

test('a value that is no Bedrock ARN stops the synthesis', () => {
  expect(() => synthesize({ enableBedrock: 'true', bedrockModelArns: 'arn:aws:s3:::bucket/*' }, { bundle: false })).toThrow('bedrockModelArns');
});
