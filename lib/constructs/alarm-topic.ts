import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Effect, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

/**
 * The SNS topic the alarms notify, encrypted and reachable only over TLS. CloudWatch publishes to
 * it as a service, so it needs the topic's permission to publish and the key's permission to
 * encrypt; both are limited to this account's alarms of this stage. The AWS-managed SNS key can't
 * be used: its policy admits no service principal.
 */
export class AlarmTopic extends Construct {
  readonly topic: Topic;
  readonly key: Key;

  constructor(scope: Construct, id: string, props: { namePrefix: string }) {
    super(scope, id);
    const { account, region, partition } = Stack.of(this);
    const alarmArns = `arn:${partition}:cloudwatch:${region}:${account}:alarm:${props.namePrefix}*`;
    const fromOwnAlarms = { StringEquals: { 'aws:SourceAccount': account }, ArnLike: { 'aws:SourceArn': alarmArns } };

    this.key = new Key(this, 'Key', {
      description: `Encrypts the alarm notifications of ${props.namePrefix.replace(/-$/, '')}`,
      enableKeyRotation: true,
      // Holds no data at rest beyond messages in flight: it goes with the stack.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsEncrypt',
        effect: Effect.ALLOW,
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOwnAlarms,
      }),
    );

    this.topic = new Topic(this, 'Topic', {
      topicName: `${props.namePrefix}alarms`,
      displayName: `${props.namePrefix}alarms`,
      masterKey: this.key,
      enforceSSL: true,
    });
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: fromOwnAlarms,
      }),
    );
  }
}
