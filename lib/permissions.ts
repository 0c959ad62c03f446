import { CONSUMER_TABLE_CALLS, PROXY_TABLE_CALLS, tableGrants, type TableCalls } from '../lambda/store/table-calls';
import { TABLES } from '../lambda/store/tables';
import type { ProxyStack } from './proxy-stack';
import { bedrockGrantArns, type DeploySettings } from './settings';

export type FunctionRole = 'proxy' | 'stats consumer';

/**
 * One permission of a function's role: its actions, the resource they are on, and what uses them.
 * The DynamoDB ones come from the calls the code sends (lambda/store/table-calls.ts); the others are
 * listed here. A grant that exists only with some context values says so with `when`, and is
 * then expected in the template exactly when its settings hold. test/infra/least-privilege.test.ts
 * compares this list with every role policy of the synthesized template; docs/deploy.md's
 * permissions table is rendered from it.
 */
export interface DeclaredGrant {
  role: FunctionRole;
  actions: readonly string[];
  /** The resources as the stack refers to them (tokens CloudFormation resolves). */
  resource: (stack: ProxyStack) => string | string[];
  /** The resource as docs/deploy.md names it. */
  resourceName: string;
  usedFor: string;
  /** The partition keys the actions are limited to (`dynamodb:LeadingKeys`, `ForAllValues:StringLike`). */
  leadingKeys?: readonly string[];
  /** The only attributes the actions may name (`dynamodb:Attributes`, `ForAllValues:StringEquals`). */
  attributes?: readonly string[];
  /** Only with some context values: which (for the page) and whether these settings have them. */
  when?: { context: string; holds: (settings: DeploySettings) => boolean };
}

const OTHER_GRANTS: readonly DeclaredGrant[] = [
  {
    role: 'proxy',
    actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
    resource: (s) => s.providerKeys.key.keyArn,
    resourceName: 'the provider-key KMS key',
    usedFor: 'open and seal stored provider keys, only with the `{account_id, provider}` encryption context',
  },
  {
    role: 'proxy',
    actions: ['secretsmanager:GetSecretValue'],
    resource: (s) => s.adminSecret.secret.secretArn,
    resourceName: 'the admin key secret',
    usedFor: 'read the admin key once per cold start',
  },
  {
    role: 'proxy',
    actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
    resource: (s) => s.proxyFunction.logGroup.logGroupArn,
    resourceName: "the function's log group",
    usedFor: 'its own log lines',
  },
  {
    role: 'proxy',
    actions: ['cognito-idp:DescribeUserPoolClient', 'cognito-idp:ListUserPoolClients'],
    resource: (s) => s.signInPool!.pool.userPoolArn,
    resourceName: 'the sign-in user pool',
    usedFor: "read its app client's id and secret at the first sign-in (docs/people.md)",
    when: { context: '`-c cognitoSignIn=true`', holds: (settings) => settings.signIn?.kind === 'cognito' },
  },
  {
    role: 'proxy',
    actions: ['secretsmanager:GetSecretValue'],
    resource: (s) => (s.settings.signIn?.kind === 'oidc' ? s.settings.signIn.clientSecretArn : []),
    resourceName: 'the `oidcClientSecretArn` secret',
    usedFor: "read the identity provider's client secret at the first sign-in (docs/people.md)",
    when: { context: '`-c oidcIssuer=…`', holds: (settings) => settings.signIn?.kind === 'oidc' },
  },
  {
    role: 'proxy',
    actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
    resource: (s) => bedrockGrantArns(s.settings, s.account),
    resourceName: 'the `bedrockModelArns` models and inference profiles',
    usedFor: "Amazon Bedrock with the role's own credentials (docs/bedrock.md)",
    when: { context: '`-c enableBedrock=true`', holds: (settings) => Boolean(settings.bedrockAccess) },
  },
  {
    role: 'stats consumer',
    actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
    resource: (s) => [s.tables.entry('usageLogs').table.tableStreamArn!, s.tables.entry('audit').table.tableStreamArn!],
    resourceName: "the usage-logs and audit tables' streams",
    usedFor: "the event source mappings read the streams with the function's role",
  },
  {
    role: 'stats consumer',
    actions: ['dynamodb:ListStreams'],
    resource: () => '*',
    resourceName: '`*`',
    usedFor: 'the event source mapping; this action has no resource-level permission and returns no data',
  },
  {
    role: 'stats consumer',
    actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
    resource: (s) => s.statsConsumer.deadLetters.queueArn,
    resourceName: 'its dead-letter queue',
    usedFor: 'the positions of batches given up on',
  },
  {
    role: 'stats consumer',
    actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
    resource: (s) => s.statsConsumer.alertQueue.queueArn,
    resourceName: 'the alert queue',
    usedFor: "each claimed budget alert's delivery attempts (docs/alerts.md)",
  },
  {
    role: 'stats consumer',
    actions: [
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ],
    resource: (s) => s.statsConsumer.alertQueue.queueArn,
    resourceName: 'the alert queue',
    usedFor: "the queue's event source mapping hands the function the alerts to deliver",
  },
  {
    role: 'stats consumer',
    actions: ['sns:Publish'],
    resource: (s) => s.alertTopic.topic.topicArn,
    resourceName: 'the budget-alert topic (or `alertTopicArn`)',
    usedFor: 'budget alerts (docs/alerts.md)',
  },
  {
    role: 'stats consumer',
    actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
    resource: (s) => s.alertTopic.key!.keyArn,
    resourceName: "the budget-alert topic's KMS key",
    usedFor: 'publishing to the encrypted topic',
    when: { context: 'no `-c alertTopicArn`', holds: (settings) => !settings.alertTopicArn },
  },
  {
    role: 'stats consumer',
    actions: ['kms:Decrypt'],
    resource: (s) => s.providerKeys.key.keyArn,
    resourceName: 'the provider-key KMS key',
    usedFor: 'open the sealed webhook signing secrets, only with the `{account_id, provider}` encryption context',
  },
  {
    role: 'stats consumer',
    actions: ['s3:PutObject'],
    resource: (s) => s.usageExport.usageObjectsArn,
    resourceName: "the export bucket's `usage/` objects",
    usedFor: 'the usage rows exported for Athena (docs/alerts.md)',
  },
  {
    role: 'stats consumer',
    actions: ['s3:PutObject'],
    resource: (s) => s.usageExport.auditObjectsArn,
    resourceName: "the export bucket's `audit/` objects",
    usedFor: 'the audit entries exported for Athena (docs/people.md)',
  },
  {
    role: 'stats consumer',
    actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
    resource: (s) => s.statsConsumer.logGroup.logGroupArn,
    resourceName: "the consumer's log group",
    usedFor: 'its own log lines',
  },
];

function tableGrantsOf(role: FunctionRole, calls: readonly TableCalls[]): DeclaredGrant[] {
  const listed = (names: readonly string[]) => names.map((k) => `\`${k}\``).join(', ');
  return tableGrants(calls).map(({ table: id, actions, leadingKeys, attributes }) => ({
    role,
    actions: actions.map((a) => `dynamodb:${a}`),
    resource: (s: ProxyStack) => s.tables.entry(id).table.tableArn,
    resourceName: `the ${TABLES[id].logicalName} table${leadingKeys ? `, partitions ${listed(leadingKeys)}` : ''}${attributes ? `, attributes ${listed(attributes)} only` : ''}`,
    leadingKeys,
    attributes,
    usedFor: calls
      .filter((c) => c.table === id && c.actions.some((a) => actions.includes(a)))
      .map((c) => c.purpose)
      .join('; '),
  }));
}

/** Every grant the stack's roles hold with these settings (`all`: the conditional ones too, for the page). */
export function declaredGrants(settings: DeploySettings, all = false): DeclaredGrant[] {
  const every = [
    ...tableGrantsOf('proxy', PROXY_TABLE_CALLS),
    ...OTHER_GRANTS.filter((g) => g.role === 'proxy'),
    ...tableGrantsOf('stats consumer', CONSUMER_TABLE_CALLS),
    ...OTHER_GRANTS.filter((g) => g.role !== 'proxy'),
  ];
  return every.filter((g) => all || !g.when || g.when.holds(settings));
}
