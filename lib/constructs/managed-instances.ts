import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  Peer,
  Port,
  SecurityGroup,
  Subnet,
  SubnetType,
  Vpc,
  type ISubnet,
  type IVpc,
} from 'aws-cdk-lib/aws-ec2';
import { Architecture, CapacityProvider, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ManagedInstancesSettings } from '../settings';

export interface ManagedInstancesProps {
  namePrefix: string;
  settings: ManagedInstancesSettings;
  /** Retention of the VPC's flow logs, as the functions' own logs. */
  logRetention: RetentionDays;
}

/**
 * Lambda Managed Instances for the proxy function (docs/deploy.md, "Managed instances"): a
 * capacity provider of arm64 instances in private subnets, their only way out HTTPS (to the
 * providers through a NAT gateway, to DynamoDB through a gateway endpoint, which costs nothing).
 * The VPC is the stack's own unless the settings name one; a named VPC must already route its
 * subnets to the internet and to DynamoDB.
 */
export class ManagedInstances extends Construct {
  readonly vpc: IVpc;
  readonly capacityProvider: CapacityProvider;
  readonly securityGroup: SecurityGroup;

  constructor(scope: Construct, id: string, props: ManagedInstancesProps) {
    super(scope, id);
    const { settings } = props;
    let subnets: ISubnet[];
    if (settings.vpc) {
      this.vpc = Vpc.fromVpcAttributes(this, 'Vpc', {
        vpcId: settings.vpc.vpcId,
        availabilityZones: settings.vpc.subnetIds.map((_, i) => `az-${i}`),
        privateSubnetIds: settings.vpc.subnetIds,
      });
      subnets = settings.vpc.subnetIds.map((subnetId, i) => Subnet.fromSubnetId(this, `Subnet${i}`, subnetId));
    } else {
      const flowLogs = new LogGroup(this, 'FlowLogs', {
        retention: props.logRetention,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const vpc = new Vpc(this, 'Vpc', {
        maxAzs: 2,
        // One NAT gateway: the providers' APIs are the only internet destination.
        natGateways: 1,
        subnetConfiguration: [
          { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
          { name: 'instances', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
        ],
        // DynamoDB without the NAT gateway (free, and no per-GB NAT charge on every store call).
        gatewayEndpoints: { DynamoDB: { service: GatewayVpcEndpointAwsService.DYNAMODB } },
        flowLogs: {
          rejected: {
            destination: FlowLogDestination.toCloudWatchLogs(flowLogs),
            trafficType: FlowLogTrafficType.REJECT,
          },
        },
        // Its default security group is used by nothing here; restricting it would add a custom-resource function.
        restrictDefaultSecurityGroup: false,
      });
      this.vpc = vpc;
      subnets = vpc.privateSubnets;
    }

    // Nothing connects to the instances; they connect out over HTTPS only.
    this.securityGroup = new SecurityGroup(this, 'Instances', {
      vpc: this.vpc,
      description: `${props.namePrefix}proxy managed instances: HTTPS out only`,
      allowAllOutbound: false,
    });
    this.securityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'the providers and DynamoDB, over HTTPS');

    // The role Lambda uses to launch and stop the instances, with AWS's policy written for exactly that.
    const operatorRole = new Role(this, 'OperatorRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Lambda manages the ${props.namePrefix}proxy capacity provider's instances with it`,
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('AWSLambdaManagedEC2ResourceOperator')],
    });
    Validations.of(operatorRole).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AWSLambdaManagedEC2ResourceOperator]',
      reason:
        "Lambda's own policy for a capacity provider's operator role: the EC2 instance, network-interface and volume actions Lambda Managed Instances takes for it, kept current by AWS as the service changes; a copy written here would go stale.",
    });
    this.capacityProvider = new CapacityProvider(this, 'CapacityProvider', {
      operatorRole,
      capacityProviderName: `${props.namePrefix}proxy`,
      subnets,
      securityGroups: [this.securityGroup],
      architectures: [Architecture.ARM_64],
      maxVCpuCount: settings.maxVcpus,
    });
  }

  /** Puts the function on the capacity provider, with its per-environment concurrency set. */
  addFunction(fn: IFunction, concurrency: number): void {
    this.capacityProvider.addFunction(fn, { perExecutionEnvironmentMaxConcurrency: concurrency });
  }
}
