/**
 * One Lambda execution environment on this machine: AWS's runtime interface client (the npm
 * package aws-lambda-ric, the runtime of Lambda's Node.js images) loads a built handler module the
 * way Lambda does (`LAMBDA_TASK_ROOT`, `_HANDLER`) and takes its invocations from a Runtime API on
 * 127.0.0.1 (runtime-api.ts). The client builds a native addon, so it is installed for these tests
 * only, in its own folder (test/infra/lambda-ric, see docs/development.md), not with the project.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startRuntimeApi, type Invocation, type InvokeOptions, type RuntimeApi } from './runtime-api';
import { PROCESS_START_MS, eventually } from '../../support/patience';

const PROJECT_ROOT = resolve(__dirname, '../../..');
const RIC_FOLDER = 'test/infra/lambda-ric';
const RIC_PACKAGE = join(PROJECT_ROOT, RIC_FOLDER, 'node_modules/aws-lambda-ric');

/**
 * How long a test waits for scripts/test-all.sh's background install of the client: a compile of a
 * few minutes, slower beside the rest of the suite.
 */
export const RIC_INSTALL_MS = 900_000;
/** The file scripts/test-all.sh keeps while it installs the client. */
const INSTALLING_MARKER = join(PROJECT_ROOT, RIC_FOLDER, 'installing');

/** Resolves once no background install of the client is under way (a hook's work: give it RIC_INSTALL_MS). */
export async function runtimeInterfaceClientInstalled(): Promise<void> {
  await eventually(async () => (existsSync(INSTALLING_MARKER) ? undefined : true), RIC_INSTALL_MS, 1_000);
}

/** The client's entry; a clear failure, saying how to install it, when it is not installed. */
export function runtimeInterfaceClient(): string {
  if (!existsSync(join(RIC_PACKAGE, 'index.mjs')) || !existsSync(join(RIC_PACKAGE, 'rapid-client.node'))) {
    throw new Error(
      `AWS's Lambda runtime interface client is not installed. Run \`npm ci --prefix ${RIC_FOLDER}\` ` +
        '(it compiles a native addon: cmake, make, g++ and python3 are needed; scripts/test-all.sh installs it with them).',
    );
  }
  return join(RIC_PACKAGE, 'index.mjs');
}

/**
 * The Node flags Lambda's Node.js runtime starts a function with (its bootstrap script): the
 * garbage collector exposed to the function, and the heap sized from the memory setting, a tenth
 * of it for the young generation (two semi-spaces), the rest for the old one.
 */
export function lambdaNodeFlags(memoryMb: number): string[] {
  const newSpaceMb = Math.floor(memoryMb / 10);
  return [
    '--expose-gc',
    '--max-http-header-size=81920',
    `--max-semi-space-size=${Math.floor(newSpaceMb / 2)}`,
    `--max-old-space-size=${memoryMb - newSpaceMb}`,
  ];
}

export interface LambdaInstance {
  api: RuntimeApi;
  process: ChildProcess;
  /** One invocation, to its end (the runtime asking for the next event); fails if the instance exits first. */
  invoke(event: unknown, options?: InvokeOptions): Promise<Invocation>;
  /** Everything the instance printed (its logs), for a failing test's message. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the instance and waits for its cold start (the module loaded, the first event asked for).
 * `taskRoot` holds `<module>.mjs`; `handler` is `<module>.<export>`.
 */
export async function startLambdaInstance(options: {
  taskRoot: string;
  handler: string;
  env: NodeJS.ProcessEnv;
  /** The function's memory setting: the runtime's heap flags follow it (`lambdaNodeFlags`). Default 1024. */
  memoryMb?: number;
  /** Called as the instance is frozen and thawed (e.g. to stall its network with it). */
  onFreeze?: () => void;
  onThaw?: () => void;
}): Promise<LambdaInstance> {
  const entry = runtimeInterfaceClient();
  let child: ChildProcess | undefined;
  let stoppedAtTimeLimit = false;
  // Between invocations Lambda freezes the environment: nothing the function left running goes on.
  const api = await startRuntimeApi({
    freeze: () => {
      child?.kill('SIGSTOP');
      options.onFreeze?.();
    },
    thaw: () => {
      options.onThaw?.();
      child?.kill('SIGCONT');
    },
    // Lambda stops an invocation at its time limit, and whatever it had not finished with it.
    timeUp: () => {
      stoppedAtTimeLimit = true;
      child?.kill('SIGKILL');
    },
  });
  const memoryMb = options.memoryMb ?? 1024;
  child = spawn(process.execPath, [...lambdaNodeFlags(memoryMb), entry], {
    cwd: options.taskRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...options.env,
      AWS_LAMBDA_RUNTIME_API: api.address,
      LAMBDA_TASK_ROOT: options.taskRoot,
      _HANDLER: options.handler,
      AWS_LAMBDA_FUNCTION_NAME: 'ai-usage-proxy-function',
      AWS_LAMBDA_FUNCTION_VERSION: '1',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/ai-usage-proxy-function',
      AWS_LAMBDA_LOG_STREAM_NAME: '2026/01/01/[1]0123456789abcdef',
      // The stack's function logs in JSON (lib/constructs/proxy-function.ts).
      AWS_LAMBDA_LOG_FORMAT: 'JSON',
    },
  });
  let printed = '';
  child.stdout!.on('data', (part: Buffer) => (printed += part.toString('utf8')));
  child.stderr!.on('data', (part: Buffer) => (printed += part.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await api.close();
  };
  let timer: NodeJS.Timeout | undefined;
  const started = await Promise.race([
    api.ready.then(() => true),
    exited.then(() => false),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PROCESS_START_MS))),
  ]);
  clearTimeout(timer);
  if (!started) {
    await stop();
    throw new Error(`the Lambda instance did not start:\n${printed}`);
  }
  const invoke = (event: unknown, invokeOptions?: InvokeOptions) =>
    Promise.race([
      api.invoke(event, invokeOptions),
      exited.then((code) =>
        Promise.reject(
          new Error(
            `the Lambda instance ${stoppedAtTimeLimit ? 'was stopped at the time limit' : `exited (${code ?? child.signalCode})`} during the invocation:\n${printed}`,
          ),
        ),
      ),
    ]);
  return { api, process: child, invoke, output: () => printed, stop };
}
