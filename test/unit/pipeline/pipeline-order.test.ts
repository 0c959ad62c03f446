/**
 * The pipeline's order (docs/behaviour.md, "Processing order") is the one in proxy-handler.ts, and
 * the compiler holds it: a step whose input an earlier step proves can't be placed before it. The
 * `@ts-expect-error` lines are checked by `npm run typecheck`: if one of them compiled, it would fail.
 */
import { FailedSignIns } from '../../../lambda/auth/failed-sign-ins';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../lambda/wiring/config';
import { buildDeps } from '../../../lambda/wiring/deps';
import { authenticate } from '../../../lambda/pipeline/authenticate';
import { enforceBudget } from '../../../lambda/pipeline/enforce-budget';
import { enforceModelList } from '../../../lambda/pipeline/enforce-model-list';
import { enforceRateLimit } from '../../../lambda/pipeline/enforce-rate-limit';
import { forwardUpstream } from '../../../lambda/pipeline/forward-upstream';
import { Pipeline, streamingHandler } from '../../../lambda/pipeline/pipeline';
import { resolveProviderKey } from '../../../lambda/pipeline/resolve-provider-key';
import { routeRequest } from '../../../lambda/pipeline/route-request';
import { serveFromCache } from '../../../lambda/pipeline/serve-from-cache';
import { identify } from '../../../lambda/pipeline/identify';
import { validateBody } from '../../../lambda/pipeline/validate-body';
import { answerErrors } from '../../../lambda/pipeline/answer-errors';
import { installLambdaShim } from '../../../lambda/local/lambda-shim';
import { proxyPipeline } from '../../../lambda/wiring/proxy-handler';
import { recordUsage } from '../../../lambda/pipeline/record';

let dataDir: string;
let deps: ReturnType<typeof buildDeps>;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'pipeline-order-'));
  deps = buildDeps(loadConfig({ DATA_DIR: dataDir, DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' }));
  installLambdaShim();
});

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const notCalled = () => {
  throw new Error('not called');
};
const outside = async () => undefined;

it('runs the steps in the documented order', () => {
  expect(proxyPipeline(deps).steps.map((step) => step.name)).toEqual([
    'route',
    'identify',
    'authenticate',
    'rate limit',
    'validate',
    'model list',
    'budget',
    'resolve provider key',
    'cache',
  ]);
});

it('does not compile a step placed before the step that proves its input', () => {
  const routed = Pipeline.start(notCalled).then(routeRequest());
  const handle = forwardUpstream(deps);
  const answerError = answerErrors(deps.log, deps.isStoreOutage, new FailedSignIns());
  const record = recordUsage(deps);
  // @ts-expect-error validation joins the request's tags with the token's, known once it is authenticated
  routed.then(validateBody());
  // @ts-expect-error authentication awaits the token read that step 2 (identify) starts
  routed.then(authenticate());
  // @ts-expect-error the rate limit needs an authenticated token
  routed.then(identify(deps)).then(enforceRateLimit());
  const authenticated = routed.then(identify(deps)).then(authenticate());
  // @ts-expect-error the cache answers only a validated request within its budget
  authenticated.then(enforceRateLimit()).then(resolveProviderKey(deps)).then(serveFromCache(deps));
  const keyed = authenticated.then(enforceRateLimit()).then(validateBody()).then(resolveProviderKey(deps));
  // @ts-expect-error forwarding needs the budget step
  streamingHandler({ pipeline: keyed, outside, handle, answerError, record });
  // @ts-expect-error the budget is checked only for a model the token may use
  keyed.then(enforceBudget(deps)).then(serveFromCache(deps));
  const budgeted = keyed.then(enforceModelList()).then(enforceBudget(deps));
  // @ts-expect-error forwarding needs the cache step's fill, which stores or lets pass the answer
  streamingHandler({ pipeline: budgeted, outside, handle, answerError, record });
  const complete = budgeted.then(serveFromCache(deps));
  expect(streamingHandler({ pipeline: complete, outside, handle, answerError, record })).toEqual(expect.any(Function));
});
