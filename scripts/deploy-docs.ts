/**
 * The facts docs/deploy.md states about the stack, rendered from their one source: the permissions
 * from lib/permissions.ts (where each grant's reason stays), the alarms from the synthesized template, the cost from
 * lib/cost-model.ts. `npm run docs:deploy` writes them between the page's markers;
 * test/infra/deploy-docs.test.ts fails when the page and the sources disagree.
 */
import { Template } from 'aws-cdk-lib/assertions';
import {
  ASSUMED,
  athenaQueryUsd,
  costPerMillion,
  managedInstancesCost,
  MANAGED_PRICES,
  NAT_BYTES_PER_REQUEST,
  EXPORT_BYTES_PER_ROW,
  GATE_ITEM,
  GATE_WRITE_UNITS,
  gateItemBytes,
  gatePartitionLoad,
  PARTITION_WRITE_UNITS_PER_SECOND,
  PRICES,
  SUBJECT_WRITES_PER_BATCH,
  ROW_GB_PER_MILLION,
  ROW_WRITE_UNITS,
} from '../lib/cost-model';
import { MAX_REQUESTS_PER_MINUTE } from '../lambda/auth/token-limits';
import { MAX_GATE_SHARDS, SHARD_REQUESTS_PER_MINUTE, shardCount } from '../lambda/auth/sliding-minute';
import { DEFAULTS } from '../lib/settings';
import { namePrefix } from '../lib/names';
import { declaredGrants } from '../lib/permissions';
import type { ProxyStack } from '../lib/proxy-stack';

export type Facts = Record<string, string>;

const code = (name: string) => `\`${name}\``;

/** Each role's grants, one line per resource: the actions, and the settings a grant exists only with. */
function permissionsTable(stack: ProxyStack): string {
  const lines: string[] = [];
  let role = '';
  for (const g of declaredGrants(stack.settings, true)) {
    if (g.role !== role) lines.push(`${lines.length ? '\n' : ''}**${(role = g.role)}**:\n`);
    const service = g.actions[0].split(':')[0];
    const actions = g.actions.map((a) => (a.startsWith(`${service}:`) ? a.slice(service.length + 1) : a));
    lines.push(
      `- ${g.resourceName}${g.when ? ` (only with ${g.when.context})` : ''}: ${service} ${actions.map(code).join(', ')}`,
    );
  }
  return lines.join('\n');
}

interface AlarmProperties {
  AlarmName: string;
  AlarmDescription: string;
  Threshold: number;
  EvaluationPeriods: number;
  Period?: number;
  MetricName?: string;
  Metrics?: { Id: string; ReturnData?: boolean; MetricStat?: { Period: number } }[];
}

/** The alarms as the synthesized template defines them: name, threshold and window, and what it means. */
function alarmTable(stack: ProxyStack): string {
  const template = Template.fromStack(stack).toJSON() as {
    Resources: Record<string, { Type: string; Properties: AlarmProperties }>;
  };
  const prefix = namePrefix(stack.settings.stage);
  const alarms = Object.values(template.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
  // Alarms alike but for their table (one per table) share a line.
  const TABLE = /^DynamoDB throttled requests on the (\S+) table\.$/;
  const groups = new Map<string, string[]>();
  for (const { Properties: p } of alarms) {
    const period = p.Period ?? p.Metrics?.find((m) => m.MetricStat)?.MetricStat?.Period ?? 0;
    const window = `${(period * p.EvaluationPeriods) / 60} min`;
    const unit = p.MetricName === 'Duration' ? ' ms' : '';
    const meaning = TABLE.test(p.AlarmDescription) ? 'DynamoDB throttled requests on its table.' : p.AlarmDescription;
    const key = `(≥ ${p.Threshold}${unit} over ${window}): ${meaning}`;
    groups.set(key, [...(groups.get(key) ?? []), `\`${p.AlarmName.replace(prefix, '')}\``]);
  }
  const rows = [...groups].map(([key, names]) => `- ${names.join(', ')} ${key}`);
  return [`${alarms.length} alarms (\`<stage>-ai-usage-proxy-\` + name):`, '', ...rows].join('\n');
}

const usd = (value: number) => `$${value.toFixed(2)}`;

/** The cost section's figures: the assumptions, the lines at the default memory, other sizes, and the fixed monthly part. */
function costBlock(stack: ProxyStack): string {
  const cost = costPerMillion(ASSUMED);
  const a = cost.inputs;
  const resources = Object.values(
    Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: AlarmProperties }>,
  );
  const keys = resources.filter((r) => r.Type === 'AWS::KMS::Key').length;
  const alarms = resources.filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
  // CloudWatch bills an alarm per metric it reads; a metric-math alarm reads each of its metrics.
  const alarmMetrics = alarms.reduce(
    (sum, r) => sum + Math.max(1, (r.Properties.Metrics ?? []).filter((m) => m.MetricStat).length),
    0,
  );
  const fixed = keys * PRICES.kmsKeyPerMonth + PRICES.secretPerMonth + alarmMetrics * PRICES.alarmMetricPerMonth;
  return [
    '| assumption | value |',
    '|---|--:|',
    `| provider answer time | ${a.upstreamSeconds} s |`,
    `| store waits per request (gate call, row put) | ${a.storeWaitMs} ms |`,
    `| CPU per request on a full vCPU (the benchmark's c=1) | ${a.cpuMsPerRequest} ms |`,
    `| write units per request (gate ${GATE_WRITE_UNITS}, row ${ROW_WRITE_UNITS}; the consumer folds spend) | ${a.writeUnitsPerRequest} |`,
    `| read units per request (key cached, no budget) | ${a.readUnitsPerRequest} |`,
    `| cold starts per million, init each | ${a.coldStartsPerMillion.toLocaleString('en')}, ${a.coldStartInitMs} ms |`,
    `| traffic (${cost.rowsPerConsumerBatch.toFixed(1)} rows per ${a.batchingWindowSeconds} s consumer batch) | ${a.monthlyRequests.toLocaleString('en')} requests a month |`,
    `| consumer batch: billed time, rollup writes, spend writes (token's) | ${a.consumerMsPerBatch} ms, ${a.rollupWritesPerBatch}, ${a.spendWritesPerBatch} |`,
    '',
    `At ${a.memoryMb} MB (the default), ${cost.billedMsPerRequest.toFixed(0)} ms billed per request:`,
    '',
    '| item | per million requests |',
    '|---|--:|',
    ...cost.lines.map((line) => `| ${line.item} | ${usd(line.usdPerMillion)} |`),
    `| **total** | **${usd(cost.usdPerMillion)}** |`,
    '',
    '| memory | billed per request | per million requests |',
    '|---|--:|--:|',
    ...[128, 192, 256, 512, 1024].map((memoryMb) => {
      const at = costPerMillion({ ...ASSUMED, memoryMb });
      return `| ${memoryMb} MB${memoryMb === a.memoryMb ? ' (default)' : ''} | ${at.billedMsPerRequest.toFixed(0)} ms | ${usd(at.usdPerMillion)} |`;
    }),
    '',
    `Worst case, each row alone in a batch: consumer ${usd(cost.consumerWorstCaseUsdPerMillion)}, export PUTs ${usd(cost.exportWorstCaseUsdPerMillion)}. Each requester label or tag: ${SUBJECT_WRITES_PER_BATCH} more spend write per batch (${usd(((1e6 / cost.rowsPerConsumerBatch) * SUBJECT_WRITES_PER_BATCH * PRICES.dynamoPerMillionWriteUnits) / 1e6)} per million). ` +
      `Stored rows: about ${ROW_GB_PER_MILLION} GB per million, ${usd(ROW_GB_PER_MILLION * (PRICES.dynamoStoragePerGbMonth + PRICES.dynamoPitrPerGbMonth))} per million rows a month with point-in-time recovery until \`logRetentionDays\` expires them: about ${Math.round(((a.monthlyRequests / 1e6) * ROW_GB_PER_MILLION * DEFAULTS.logRetentionDays) / 30)} GB, ${usd(((a.monthlyRequests / 1e6) * ROW_GB_PER_MILLION * DEFAULTS.logRetentionDays * (PRICES.dynamoStoragePerGbMonth + PRICES.dynamoPitrPerGbMonth)) / 30)} a month. ` +
      `Exported rows: about ${EXPORT_BYTES_PER_ROW} bytes each gzipped, until \`usageExportDays\`; a named query over a month of a million rows scans about ${Math.round((EXPORT_BYTES_PER_ROW * 1e6) / 1e6)} MB ($${athenaQueryUsd(1e6).toFixed(4)}), over a year $${athenaQueryUsd(12e6).toFixed(4)}.`,
    '',
    `\`consumerWindowSeconds\` trades the per-batch lines against how far spend may lag: up to the window ([budgets.md](budgets.md)):`,
    '',
    '| `consumerWindowSeconds` | rows per batch | per-batch lines, per million | total per million |',
    '|--:|--:|--:|--:|',
    ...[10, 30, 60, 120, 300].map((window) => {
      const at = costPerMillion({ ...ASSUMED, batchingWindowSeconds: window });
      const perBatch = at.lines
        .filter((line) => /^(Stream consumer|Usage metrics|Usage export \(S3 PUTs)/.test(line.item))
        .reduce((sum, line) => sum + line.usdPerMillion, 0);
      return `| ${window} s${window === DEFAULTS.consumerWindowSeconds ? ' (default)' : ''} | ${at.rowsPerConsumerBatch.toFixed(1)} | ${usd(perBatch)} | ${usd(at.usdPerMillion)} |`;
    }),
    '',
    `Fixed monthly: ${keys} KMS keys (${usd(keys * PRICES.kmsKeyPerMonth)}, up to ${usd(keys * 3 * PRICES.kmsKeyPerMonth)} in years their rotations are billed), ` +
      `the admin secret (${usd(PRICES.secretPerMonth)}) and ${alarms.length} alarms reading ${alarmMetrics} metrics (${usd(alarmMetrics * PRICES.alarmMetricPerMonth)}): ${usd(fixed)} a month.`,
  ].join('\n');
}

const perSecond = (units: number) => (units < 10 ? units.toFixed(1) : Math.round(units).toLocaleString('en'));
const kb = (bytes: number) => (bytes < 1024 ? `${Math.round(bytes)} bytes` : `${(bytes / 1024).toFixed(1)} KB`);

/**
 * The token gate's partitions: its item's size, and the write units a second on the busiest of a
 * token's gate partitions at a few steady rates (lib/cost-model.ts).
 */
function gateBlock(): string {
  const rates: Array<[number, string]> = [
    [DEFAULTS.rateLimitPerMinute, 'the default limit'],
    [SHARD_REQUESTS_PER_MINUTE, 'the most on one gate item'],
    [60_000, '1,000 a second'],
    [MAX_REQUESTS_PER_MINUTE, 'the highest per-token limit'],
  ];
  return [
    `**The token's gate** (\`rate-limits\`, \`TOKEN#<token id>\` and \`TOKEN#<token id>#<n>\`): at most ${kb(gateItemBytes())}`,
    `(about ${GATE_ITEM.baseBytes} bytes of the token's copy, ${GATE_ITEM.counterBytes} of counters), so each write is ${GATE_WRITE_UNITS} unit; one gate item`,
    `per ${SHARD_REQUESTS_PER_MINUTE.toLocaleString('en')} a minute of the token's limit, up to ${MAX_GATE_SHARDS}, each request writing one at random. At a steady rate at the limit:`,
    '',
    '| requests a minute | gate items | write units a second on the busiest |',
    '|--:|--:|--:|',
    ...rates.map(
      ([rate, what]) =>
        `| ${rate.toLocaleString('en')} (${what}) | ${shardCount(rate)} | ${perSecond(gatePartitionLoad(rate))} |`,
    ),
    '',
    `So a token's gate takes at most ${perSecond(gatePartitionLoad(MAX_REQUESTS_PER_MINUTE))} of a partition's ${PARTITION_WRITE_UNITS_PER_SECOND.toLocaleString('en')} write units a second`,
    '(`test/integration/store/gate-item-size.test.ts` measures the item and its write).',
  ].join('\n');
}

/** What each resource type of the template is, in the page's words; a type missing here fails the rendering. */
const RESOURCE_NAMES: Record<string, string> = {
  'AWS::Lambda::Function': 'the proxy (URL, API, dashboard) and the stream consumer',
  'AWS::Lambda::Version': "the proxy's published version",
  'AWS::Lambda::Alias': 'the `live` alias the URL serves',
  'AWS::Lambda::Url': 'the function URL (response streaming, auth NONE)',
  'AWS::Lambda::Permission': 'anyone may invoke the alias, through the URL only',
  'AWS::Lambda::EventSourceMapping': "the consumer's: the usage-logs stream, the alert queue",
  'AWS::DynamoDB::Table': 'accounts, usage-logs, usage-stats, rate-limits, audit, cache',
  'AWS::KMS::Key': 'provider keys, alarm notifications, budget alerts',
  'AWS::KMS::Alias': "the provider-key KMS key's alias",
  'AWS::SecretsManager::Secret': 'the admin key secret',
  'AWS::Logs::LogGroup': 'one per function',
  'AWS::Logs::MetricFilter': 'counting spooled rows and failed authentications',
  'AWS::IAM::Role': 'one per function',
  'AWS::IAM::Policy': 'one per role ([Permissions](#permissions))',
  'AWS::SQS::Queue': "the consumer's dead-letter queue, the alert queue and its dead-letter queue",
  'AWS::SQS::QueuePolicy': 'refusing plain HTTP',
  'AWS::CloudWatch::Alarm': '[Operations](#operations)',
  'AWS::SNS::Topic': 'alarms, budget alerts ([alerts.md](alerts.md))',
  'AWS::SNS::TopicPolicy': "HTTPS only; the alarm topic's also admits this stage's alarms",
  'AWS::SNS::Subscription': 'the `alarmEmail` and `alertEmail` subscriptions',
  'AWS::CloudWatch::Dashboard': 'the usage dashboard ([alerts.md](alerts.md#metrics))',
  'AWS::S3::Bucket': 'the usage export ([alerts.md](alerts.md#usage-in-athena))',
  'AWS::S3::BucketPolicy': 'refusing plain HTTP',
  'AWS::Glue::Database': 'the exported usage',
  'AWS::Glue::Table': '`usage_rows`',
  'AWS::Athena::WorkGroup': 'for the usage queries',
  'AWS::Athena::NamedQuery': 'spend per month by tag, model and requester',
};

/** Every resource of the template, counted by type, and whether `cdk destroy` keeps it. */
function inventory(stack: ProxyStack): string {
  const resources = Object.values(
    Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>,
  );
  const byType = new Map<string, { count: number; kept: number }>();
  for (const r of resources) {
    const entry = byType.get(r.Type) ?? { count: 0, kept: 0 };
    entry.count++;
    if (r.DeletionPolicy === 'Retain') entry.kept++;
    byType.set(r.Type, entry);
  }
  const rows = [...byType].map(([type, { count, kept }]) => {
    const name = RESOURCE_NAMES[type];
    if (!name) throw new Error(`docs/deploy.md does not describe ${type}: add it to RESOURCE_NAMES`);
    return `- ${count} \`${type}\`: ${name}${kept ? ` (${kept} kept by \`cdk destroy\`)` : ''}`;
  });
  return [`The default stage's template holds ${resources.length} resources:`, '', ...rows].join('\n');
}

/** Managed instances priced at steady rates beside the standard function (lib/cost-model.ts). */
function managedBlock(): string {
  const concurrency = DEFAULTS.managedInstancesConcurrency;
  const m = MANAGED_PRICES;
  const breakEven = Array.from({ length: 200 }, (_, i) => i + 1).find(
    (rate) =>
      managedInstancesCost(rate, concurrency).usdPerMillion <
      managedInstancesCost(rate, concurrency).standardUsdPerMillion,
  );
  return [
    `*Cost*'s assumptions plus: c7g.large instances (2 vCPUs, 4 GB) at $${m.instancePerHour} an hour on demand (check the EC2 price list), Lambda's ${m.managementFeeShare * 100}% management fee on them, at least ${m.minInstances}, ${concurrency} requests at once per environment, one NAT gateway at $${m.natGatewayPerHour} an hour and $${m.natPerGb} per GB, ${NAT_BYTES_PER_REQUEST / 1024} KB through it per request.`,
    '',
    '| steady rate | requests a month | in flight | instances | managed instances, per million | standard Lambda, per million |',
    '|--:|--:|--:|--:|--:|--:|',
    ...[10, 50].map((rate) => {
      const at = managedInstancesCost(rate, concurrency);
      return `| ${rate} a second | ${((rate * 30 * 86_400) / 1e6).toFixed(1)} million | ${Math.round(at.concurrent)} | ${at.instances} | ${usd(at.usdPerMillion)} | ${usd(at.standardUsdPerMillion)} |`;
    }),
    '',
    `Managed instances cost the same busy or idle: below about ${breakEven} requests a second steady, the standard function is cheaper.`,
  ].join('\n');
}

/** The list prices the model uses. */
function priceTable(): string {
  const p = PRICES;
  return [
    `- Lambda arm64 compute, requests: $${p.lambdaArmPerGbSecond} per GB-second, ${usd(p.lambdaPerMillionRequests)} per million`,
    `- DynamoDB on-demand writes / reads: $${p.dynamoPerMillionWriteUnits} per million write units / $${p.dynamoPerMillionReadUnits} per million read units`,
    `- DynamoDB storage / point-in-time recovery: $${p.dynamoStoragePerGbMonth} / $${p.dynamoPitrPerGbMonth} per GB-month`,
    `- KMS: ${usd(p.kmsKeyPerMonth)} per key-month (+${usd(p.kmsKeyPerMonth)} for each of the first two yearly rotations), ${usd(p.kmsPer10kRequests)} per 10,000 requests`,
    `- Secrets Manager: ${usd(p.secretPerMonth)} per secret-month, ${usd(p.secretsPer10kCalls)} per 10,000 API calls`,
    `- CloudWatch Logs ingestion, alarms: ${usd(p.logsIngestionPerGb)} per GB, ${usd(p.alarmMetricPerMonth)} per alarm metric-month`,
    `- Data transfer out to the internet: ${usd(p.dataOutPerGb)} per GB`,
    `- S3 Standard PUTs, storage: $${p.s3PutPer1000} per 1,000, $${p.s3StoragePerGbMonth} per GB-month`,
    `- Athena: ${usd(p.athenaPerTbScanned)} per TB scanned, at least 10 MB a query`,
    '- Glue Data Catalog: free up to a million objects and a million requests a month (the stack adds 2 objects)',
  ].join('\n');
}

/** Every block of facts, by marker name. */
export function renderDeployFacts(stack: ProxyStack): Facts {
  return {
    inventory: inventory(stack),
    permissions: permissionsTable(stack),
    alarms: alarmTable(stack),
    prices: priceTable(),
    cost: costBlock(stack),
    managed: managedBlock(),
    gate: gateBlock(),
  };
}

const marker = (name: string, end: 'start' | 'end') => `<!-- deploy-facts:${name}:${end} -->`;

/** The text between a block's markers; undefined when the page lacks them. */
export function factsIn(markdown: string, name: string): string | undefined {
  const from = markdown.indexOf(marker(name, 'start'));
  const to = markdown.indexOf(marker(name, 'end'));
  if (from < 0 || to < from) return undefined;
  return markdown.slice(from + marker(name, 'start').length, to).replace(/^\n|\n$/g, '');
}

export function withFacts(markdown: string, facts: Facts): string {
  let out = markdown;
  for (const [name, text] of Object.entries(facts)) {
    if (factsIn(out, name) === undefined)
      throw new Error(`docs/deploy.md has no ${marker(name, 'start')} … ${marker(name, 'end')} block`);
    const from = out.indexOf(marker(name, 'start')) + marker(name, 'start').length;
    out = `${out.slice(0, from)}\n${text}\n${out.slice(out.indexOf(marker(name, 'end')))}`;
  }
  return out;
}
