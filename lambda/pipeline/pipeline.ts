import middy, { type Request } from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEventV2, Context as LambdaContext } from 'aws-lambda';
import { BackgroundWork } from '../background-work';
import type { ProxyResponse } from '../http/response';
import type { Answering, Received, StoreReads } from './state';
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
type ProxyRequest<S> = Request<APIGatewayProxyEventV2, ProxyResponse, Error, ProxyContext<S>, StoreReads>;

/** One step as run on the request: its early answer, if it gives one. */
type Runner<S> = (request: ProxyRequest<S>) => Promise<ProxyResponse | undefined>;

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
      if (outcome instanceof Answer) return outcome.response;
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
  /** The last step, as Middy's handler: its response streams out. */
  handle: (state: NoInfer<S>, context: InvocationContext) => Promise<ProxyResponse>;
  /** Turns any error of any step into the response (answer-errors.ts). */
  /** A failed authentication's answer may be held a moment (answer-errors.ts). */
  answerError: (state: Answering | undefined, error: unknown) => ProxyResponse | Promise<ProxyResponse>;
}

/** The request's after-response work, once its event was decoded (the context is Middy's, the state's fields on it). */
function workOf(context: object): BackgroundWork | undefined {
  return 'work' in context && context.work instanceof BackgroundWork ? context.work : undefined;
}

/**
 * The Middy handler in response-streaming mode: one middleware decodes the event, one per step
 * runs it, and the request ends (`requestEnd`) only once its after-response work is done.
 */
export function streamingHandler<S extends Received>({ pipeline, handle, answerError }: HandlerParts<S>) {
  const handler = middy<APIGatewayProxyEventV2, ProxyResponse, Error, ProxyContext<S>, StoreReads>({
    executionMode: executionModeStreamifyResponse,
    // Only this invocation's own rows: concurrent requests (local server) don't wait for each other.
    requestEnd: async (request) => workOf(request.context)?.drain(),
  });
  handler.use({
    before: function receive(request: ProxyRequest<S>) {
      Object.assign(request.context, pipeline.receive(request.event));
    },
    onError: async function answerErrors(request: ProxyRequest<S>) {
      // Nothing is known of a request whose event could not be decoded.
      return answerError(workOf(request.context) ? request.context : undefined, request.error);
    },
  });
  for (const step of pipeline.steps) handler.use({ before: step.run });
  // Middy calls the handler only when every step ran without answering or throwing: the state is then `S`.
  return handler.handler((_event, context) => handle(context, context));
}
