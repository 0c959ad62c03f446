/**
 * `-c managedInstances=true` (docs/deploy.md, "Managed instances"): the same proxy function on a
 * capacity provider of arm64 instances, in a VPC whose only ways out are HTTPS to the providers
 * (through a NAT gateway) and to DynamoDB (a gateway endpoint), with its per-environment
 * concurrency set; cdk-nag stays clean. Template-only syntheses: no bundling.
 */
import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { DEFAULTS, readSettings } from '../../lib/settings';
import { single, synthesize, type SynthesizedStack } from './support/synth';

const settingsOf = (context: Record<string, unknown>) => readSettings(new App({ context }).node);

describe('with the VPC the stack creates', () => {
  let synth: SynthesizedStack;
  beforeAll(() => {
    synth = synthesize({ managedInstances: 'true' }, { bundle: false });
  });
  afterAll(() => synth?.cleanup());

  it('puts the proxy function on an arm64 capacity provider, its concurrency per environment set', () => {
    const provider = single(synth.template, 'AWS::Lambda::CapacityProvider');
    expect(provider.Properties).toMatchObject({
      InstanceRequirements: { Architectures: ['arm64'] },
      CapacityProviderScalingConfig: { MaxVCpuCount: DEFAULTS.managedInstancesMaxVcpus },
    });
    const fn = single(synth.template, 'AWS::Lambda::Function', (p) => String(p.FunctionName).endsWith('function'));
    expect(fn.Properties).toMatchObject({
      Architectures: ['arm64'],
      MemorySize: DEFAULTS.managedInstancesMemoryMb,
      CapacityProviderConfig: {
        LambdaManagedInstancesCapacityProviderConfig: {
          CapacityProviderArn: { 'Fn::GetAtt': [provider.logicalId, 'Arn'] },
          PerExecutionEnvironmentMaxConcurrency: DEFAULTS.managedInstancesConcurrency,
        },
      },
    });
    // No reserved concurrency: the capacity provider's vCPUs are the ceiling.
    expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('runs the instances in private subnets whose only ways out are HTTPS, DynamoDB through a gateway endpoint', () => {
    const provider = single(synth.template, 'AWS::Lambda::CapacityProvider');
    const vpcConfig = provider.Properties.VpcConfig as { SubnetIds: unknown[]; SecurityGroupIds: unknown[] };
    expect(vpcConfig.SubnetIds).toHaveLength(2);
    synth.template.resourceCountIs('AWS::EC2::NatGateway', 1);
    synth.template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Gateway',
      ServiceName: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith(['.dynamodb'])] }),
    });
    const group = single(synth.template, 'AWS::EC2::SecurityGroup');
    expect(group.Properties.SecurityGroupIngress).toBeUndefined();
    expect(group.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: '0.0.0.0/0' }),
    ]);
  });

  it('reports no cdk-nag finding', () => {
    const report = new AwsSolutionsChecks(synth.app).validateScope(synth.stack);
    expect(
      report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
    ).toEqual([]);
  });
});

describe('in a VPC the user names', () => {
  let synth: SynthesizedStack;
  beforeAll(() => {
    synth = synthesize(
      {
        managedInstances: true,
        managedInstancesVpcId: 'vpc-0123456789abcdef0',
        managedInstancesSubnetIds: 'subnet-0123456789abcdef0,subnet-0fedcba9876543210',
        managedInstancesConcurrency: 16,
      },
      { bundle: false },
    );
  });
  afterAll(() => synth?.cleanup());

  it('creates no VPC, and puts the instances in the subnets named', () => {
    synth.template.resourceCountIs('AWS::EC2::VPC', 0);
    synth.template.resourceCountIs('AWS::EC2::NatGateway', 0);
    const provider = single(synth.template, 'AWS::Lambda::CapacityProvider');
    expect((provider.Properties.VpcConfig as { SubnetIds: unknown[] }).SubnetIds).toEqual([
      'subnet-0123456789abcdef0',
      'subnet-0fedcba9876543210',
    ]);
    const fn = single(synth.template, 'AWS::Lambda::Function', (p) => String(p.FunctionName).endsWith('function'));
    expect(fn.Properties).toMatchObject({
      CapacityProviderConfig: {
        LambdaManagedInstancesCapacityProviderConfig: { PerExecutionEnvironmentMaxConcurrency: 16 },
      },
    });
  });

  it('reports no cdk-nag finding', () => {
    const report = new AwsSolutionsChecks(synth.app).validateScope(synth.stack);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });
});

it('refuses settings that do not go with managed instances, naming the key', () => {
  expect(() => settingsOf({ managedInstances: 'yes' })).toThrow('"managedInstances" must be true or false');
  expect(() => settingsOf({ managedInstances: 'true', provisionedConcurrency: 2 })).toThrow('"provisionedConcurrency"');
  expect(() => settingsOf({ managedInstances: 'true', managedInstancesVpcId: 'vpc-0123456789abcdef0' })).toThrow(
    'given together',
  );
  expect(() => settingsOf({ managedInstances: 'true', memoryMb: 1024 })).toThrow('"memoryMb"');
  expect(() => settingsOf({ managedInstances: 'true', managedInstancesConcurrency: 0 })).toThrow(
    '"managedInstancesConcurrency"',
  );
  expect(settingsOf({}).managedInstances).toBeUndefined();
});
