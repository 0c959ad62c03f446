import { RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

export interface AlertTopicProps {
  namePrefix: string;
  /** An existing topic to publish to instead (`-c alertTopicArn=`); its key, if any, is its owner's to open to the consumer. */
  existingTopicArn?: string;
  /** Subscribed to the topic (`-c alertEmail=`). */
  email?: string;
}

/**
 * The topic budget alerts are published to (docs/alerts.md), by the stream consumer's role alone:
 * encrypted with its own key and reachable only over TLS, like the alarm topic.
 */
export class AlertTopic extends Construct {
  readonly topic: ITopic;
  /** The topic's key; undefined for an existing topic. */
  readonly key?: Key;

  constructor(scope: Construct, id: string, props: AlertTopicProps) {
    super(scope, id);
    if (props.existingTopicArn) {
      this.topic = Topic.fromTopicArn(this, 'Topic', props.existingTopicArn);
    } else {
      this.key = new Key(this, 'Key', {
        description: `Encrypts the budget alerts of ${props.namePrefix.replace(/-$/, '')}`,
        enableKeyRotation: true,
        // Holds no data at rest beyond messages in flight: it goes with the stack.
        removalPolicy: RemovalPolicy.DESTROY,
      });
      this.topic = new Topic(this, 'Topic', {
        topicName: `${props.namePrefix}budget-alerts`,
        displayName: `${props.namePrefix}budget alerts`,
        masterKey: this.key,
        enforceSSL: true,
      });
    }
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));
  }

  /** Publishing: the one SNS action on this topic, and encrypting with its key when the stack made it. */
  grantPublish(role: IRole): void {
    role.addToPrincipalPolicy(new PolicyStatement({ actions: ['sns:Publish'], resources: [this.topic.topicArn] }));
    if (this.key)
      role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['kms:Decrypt', 'kms:GenerateDataKey'], resources: [this.key.keyArn] }),
      );
  }
}
