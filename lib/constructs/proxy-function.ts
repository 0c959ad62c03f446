import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Duration, RemovalPolicy, Stage } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Alias,
  ApplicationLogLevel,
  Architecture,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { TableGrant } from '../../lambda/store/table-calls';
import type { TableShape } from '../../lambda/store/tables';
import { tableGrantStatement } from './table-grant';

/** Where the Lambda entry lives, relative to the project root. */
export const HANDLER_ENTRY = 'lambda/entry/handler.ts';

/**
 * Lambda's hard maximum. The function spends its time waiting on the provider: the app already
 * answers 504 when no headers arrive within UPSTREAM_TIMEOUT_MS and ends a stream that stalls for
 * that long, so an invocation only runs long while tokens are actually flowing. A long reasoning or
 * generation stream can take many minutes, and hitting the Lambda timeout would kill the
 * invocation before the usage row is written, so the timeout is set as high as Lambda allows.
 */
export const FUNCTION_TIMEOUT = Duration.minutes(15);

/** The alias the URL serves; the name is part of nothing a client sees. */
export const LIVE_ALIAS = 'live';

/**
 * ESM output has no `require`; a few CommonJS dependencies call it for Node built-ins. esbuild's
 * shim looks for a global `require`, which this defines from the module's own URL.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/** The module the dashboard's built files come from (lambda/http/virtual-modules.d.ts). */
export const DASHBOARD_ASSETS_MODULE = 'virtual:dashboard-assets';

export interface ProxyFunctionProps {
  projectRoot: string;
  functionName: string;
  memoryMb: number;
  environment: Record<string, string>;
  logRetention: RetentionDays;
  reservedConcurrency?: number;
  provisionedConcurrency?: number;
}

/**
 * The one function behind the URL: proxy, management API and dashboard. Its role starts empty;
 * every permission is added by a `grant…`/`bindTable` call naming exactly what it's for.
 */
export class ProxyFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  /** What the URL invokes: the `live` alias, pointing at the version just deployed. */
  readonly target: Alias;

  constructor(scope: Construct, id: string, props: ProxyFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      // Operational logs only (no keys, no bodies): they go with the stack.
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // An explicit role instead of the default one, which carries the AWS-managed
    // AWSLambdaBasicExecutionRole (logs:CreateLogGroup and writes to every log group).
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runtime role of ${props.functionName}`,
    });
    this.logGroup.grantWrite(this.role);

    // Absolute: `cdk synth` hands the app a relative output folder (cdk.out), and esbuild reads a relative
    // alias target as a package name.
    const dashboardModule = path.resolve(
      Stage.of(this)?.outdir ?? os.tmpdir(),
      `dashboard-assets-${this.node.addr}.mjs`,
    );
    this.fn = new NodejsFunction(this, 'Function', {
      functionName: props.functionName,
      description: 'Usage-tracking AI provider proxy, management API and dashboard',
      entry: path.join(props.projectRoot, HANDLER_ENTRY),
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: path.join(props.projectRoot, 'package-lock.json'),
      // Newest Node runtime Lambda offers (middy 7 needs >= 22); Graviton is ~20% cheaper per GB-second.
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      // Each deploy that changes the code or configuration publishes a version and moves the alias
      // to it; the version it replaces is deleted once the alias has moved, so none pile up.
      currentVersionOptions: { removalPolicy: RemovalPolicy.DESTROY },
      // The function waits on the provider most of the time, and waiting is billed per GB-second.
      // The default leaves room for a request at the 6 MB body limit (docs/deploy.md, "Cost");
      // tune it with the `memoryMb` context switch.
      memorySize: props.memoryMb,
      timeout: FUNCTION_TIMEOUT,
      role: this.role,
      logGroup: this.logGroup,
      // JSON log format: console output gets its level and the request id attached, JSON lines the
      // app writes itself pass through, and level filtering reads their `level` field.
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      systemLogLevelV2: SystemLogLevel.WARN,
      reservedConcurrentExecutions: props.reservedConcurrency,
      environment: props.environment,
      bundling: {
        ...esmBundling(props.projectRoot),
        // The dashboard is embedded in the bundle. scripts/build.mjs provides it through an esbuild
        // plugin, which the esbuild CLI can't load: the same dashboard build is written to a file in
        // the cloud assembly first (never into the shipped asset), and the module name is aliased to it.
        esbuildArgs: {
          '--legal-comments': 'none',
          '--alias': [`${DASHBOARD_ASSETS_MODULE}=${dashboardModule}`],
        },
        commandHooks: {
          beforeBundling: () => [
            `${shellQuote(process.execPath)} lib/bundling/dashboard-assets.mjs ${shellQuote(dashboardModule)}`,
          ],
          afterBundling: () => [`rm -f ${shellQuote(dashboardModule)}`],
          beforeInstall: () => [],
        },
      },
    });

    // The URL is always served from this alias, from the first deploy on: its logical id, its
    // qualifier and so its hostname are then the same whatever `provisionedConcurrency` says, and
    // turning provisioned instances on or off updates the alias in place instead of replacing the
    // URL every client is configured with (docs/deploy.md, "What a setting changes").
    this.target = new Alias(this, 'Live', {
      aliasName: LIVE_ALIAS,
      version: this.fn.currentVersion,
      provisionedConcurrentExecutions: props.provisionedConcurrency,
    });
  }

  /**
   * Hands the table's physical name to the runtime under the variable it reads, and grants exactly
   * the item-level actions its code sends there (lambda/store/table-calls.ts): no `Scan`, no
   * `DescribeTable`, no stream reads, which CDK's `grantReadWriteData` would add.
   */
  bindTable(table: ITable, shape: TableShape, grants: readonly TableGrant[]): void {
    this.fn.addEnvironment(shape.envVar, table.tableName);
    for (const grant of grants) this.role.addToPrincipalPolicy(tableGrantStatement(grant, table.tableArn));
  }
}

/**
 * How every function of the stack is bundled: minified ESM for Node 22+, with the pinned SDK
 * clients inside and the version the runtime reports.
 */
export function esmBundling(projectRoot: string): BundlingOptions {
  return {
    // Local esbuild (a devDependency); Docker is neither needed nor available in CI.
    forceDockerBundling: false,
    format: OutputFormat.ESM,
    target: 'node22',
    // Prefer the ESM builds of dependencies: they tree-shake, CommonJS builds don't.
    mainFields: ['module', 'main'],
    banner: ESM_REQUIRE_BANNER,
    minify: true,
    // No source maps: the map is ~2.5 MB, and --enable-source-maps made the module import about
    // 0.1 s slower when measured (best of 15: 212 ms → 329 ms); minified stack traces are the price.
    sourceMap: false,
    // Bundle the SDK clients we pinned instead of using whatever version the runtime ships:
    // behaviour is then the one tested, and tree-shaking keeps only the commands we call.
    bundleAwsSDK: true,
    externalModules: [],
    define: { __PROXY_VERSION__: JSON.stringify(readVersion(projectRoot)) },
    esbuildArgs: { '--legal-comments': 'none' },
  };
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, "'\\''")}'`;
}

function readVersion(projectRoot: string): string {
  return (JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
}
