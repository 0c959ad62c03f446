import middy, { type Request } from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEventV2, Context as LambdaContext } from 'aws-lambda';
import { BackgroundWork } from '../base/background-work';
import { RefusalError, SharedForwardFailure } from '../base/errors';
import type { ProxyResponse } from '../http/response';
import { failedForwardEnding, isRecordable, refusalEnding, type Ending } from './record';
import type { Answering, Received, Recordable, StoreReads } from './state';
import { Answer, Prefetched, type Step } from './step';

/** What the runtime hands the handler beside the event; the local server adds `clientGone`. */
export interface InvocationContext {
  clientGone?: AbortSignal;
  /** Lambda's: how long the invocation may still run. */
  getRemainingTimeInMillis?: () => number;
}

/**
 * Middy's context carries the request's state from step to step, grown in place, and reaches the
 * handler with it; the store reads started for the request wait in Middy's `internal`.
 */
type ProxyContext<S> = LambdaContext & InvocationContext & S;
/** The request as Middy hands it to a middleware (not the proxy request of state.ts). */
type MiddyRequest<S> = Request<APIGatewayProxyEventV2, ProxyResponse, Error, ProxyContext<S>, StoreReads>;

/** One step as run on the request: its early answer, if it gives one. */
type Runner<S> = (request: MiddyRequest<S>) => Promise<Answer | undefined>;

/**
 * The steps in the order they run. `then` only accepts a step whose input the steps before
 * it have proved: the typed state is built here, so no step reads a field another may not
 * have set yet.
 */
export class Pipeline<S extends Received> {
  private constructor(
    readonly receive: (event: APIGatewayProxyEventV2) => Received,
    readonly steps: ReadonlyArray<{ name: string; run: Runner<S> }>,
  ) {}

  static start(receive: (event: APIGatewayProxyEventV2) => Received): Pipeline<Received> {
    return new Pipeline(receive, []);
  }

  then<Out extends object>(step: Step<S, Out>): Pipeline<S & Out> {
    const run: Runner<S & Out> = async (request) => {
      const outcome = await step.run(request.context, request.internal);
      if (outcome instanceof Answer) return outcome;
      if (outcome instanceof Prefetched) {
        Object.assign(request.internal, outcome.reads);
        Object.assign(request.context, outcome.proved);
      } else Object.assign(request.context, outcome);
      return undefined;
    };
    return new Pipeline<S & Out>(this.receive, [...this.steps, { name: step.name, run }]);
  }
}

export interface HandlerParts<S extends Received> {
  pipeline: Pipeline<S>;
  /** What is answered before the pipeline's first step (preflights, the management API, the dashboard); undefined for a proxy request. */
  outside: (state: Received) => Promise<ProxyResponse | undefined>;
  /** The last step, as Middy's handler: its response streams out, and its ending is the row's. */
  handle: (state: NoInfer<S>, context: InvocationContext) => Promise<Answer>;
  /** Turns any error of any step into the response (answer-errors.ts). */
  answerError: (state: Answering | undefined, error: unknown) => ProxyResponse | Promise<ProxyResponse>;
  /** Writes the request's usage row once its ending is known (record.ts); called from one place, `recordEnding`. */
  record: (state: Recordable, ending: Ending) => void;
}

/** The request's after-response work, once its event was decoded (the context is Middy's, the state's fields on it). */
function workOf(context: object): BackgroundWork | undefined {
  return 'work' in context && context.work instanceof BackgroundWork ? context.work : undefined;
}

/**
 * The Middy handler in response-streaming mode: one middleware decodes the event and answers
 * what is not a proxy request (the management API has its own router and error shape), one per step
 * runs it, and the request ends (`requestEnd`) only once its after-response work is done.
 *
 * Every way a request ends passes through `recordEnding`, the one place that writes its usage
 * row: an answer with an ending (a cache hit, a forwarded answer, once its body has gone out), a
 * refusal by the account's own rules (model list, budget), or a failed call to the provider. A
 * request refused before it proved a row's facts (unauthenticated, malformed, rate-limited) or
 * failing before it was forwarded (a store outage, an unreadable key) leaves no row (docs/failure-modes.md).
 */
export function streamingHandler<S extends Recordable>({
  pipeline,
  outside,
  handle,
  answerError,
  record,
}: HandlerParts<S>) {
  const recorded = new WeakSet<object>();
  function recordEnding(state: object, ending: Ending | undefined): void {
    if (!ending || !isRecordable(state) || recorded.has(state)) return;
    recorded.add(state);
    record(state, ending);
  }

  const handler = middy<APIGatewayProxyEventV2, ProxyResponse, Error, ProxyContext<S>, StoreReads>({
    executionMode: executionModeStreamifyResponse,
    // Only this invocation's own rows: concurrent requests (local server) don't wait for each other.
    requestEnd: async (request) => workOf(request.context)?.drain(),
  });
  handler.use({
    before: async function receive(request: MiddyRequest<S>) {
      const received = pipeline.receive(request.event);
      Object.assign(request.context, received);
      return outside(received);
    },
    onError: async function answerErrors(request: MiddyRequest<S>) {
      const thrown = request.error;
      if (thrown instanceof RefusalError) recordEnding(request.context, refusalEnding(thrown));
      if (thrown instanceof SharedForwardFailure) recordEnding(request.context, failedForwardEnding(thrown.failure));
      const error = thrown instanceof SharedForwardFailure ? thrown.failure : thrown;
      // Nothing is known of a request whose event could not be decoded.
      return answerError(workOf(request.context) ? request.context : undefined, error);
    },
  });
  for (const step of pipeline.steps)
    handler.use({
      before: async function runStep(request: MiddyRequest<S>) {
        const answer = await step.run(request);
        if (!answer) return undefined;
        recordEnding(request.context, answer.ended);
        return answer.response;
      },
    });
  // Middy calls the handler only when every step ran without answering or throwing: the state is then `S`.
  return handler.handler(async (_event, context) => {
    try {
      const answer = await handle(context, context);
      recordEnding(context, answer.ended);
      return answer.response;
    } catch (error) {
      // The provider was called, or its call was being made: the row says how it failed.
      recordEnding(context, failedForwardEnding(error));
      throw error;
    }
  });
}
