import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { ProxyResponse } from '../http/response';
import type { Answering, Received } from './state';
import { Answer, type Step } from './step';

/** What the runtime hands the handler beside the event; the local server adds `clientGone`. */
export interface InvocationContext {
  clientGone?: AbortSignal;
}

/** Middy's `request.context` carries the request's state from step to step (one object, grown in place). */
interface CarriesState {
  proxyState?: Received;
}

interface MiddyRequest {
  event: APIGatewayProxyEventV2;
  context: CarriesState;
  error?: unknown;
}

const stateOf = (request: MiddyRequest): Received | undefined => request.context.proxyState;

/**
 * The steps in the order they run. `then` only accepts a step whose input the steps before
 * it have proved: the typed state is built here, so no step reads a field another may not
 * have set yet.
 */
export class Pipeline<S extends Received> {
  /** Never set: makes a pipeline that proves less unusable where one that proves more is needed. */
  declare private readonly proves: S;

  private constructor(
    readonly receive: (event: APIGatewayProxyEventV2) => Received,
    readonly steps: ReadonlyArray<Step<never, object>>,
  ) {}

  static start(receive: (event: APIGatewayProxyEventV2) => Received): Pipeline<Received> {
    return new Pipeline(receive, []);
  }

  then<Out extends object>(step: Step<S, Out>): Pipeline<S & Out> {
    return new Pipeline<S & Out>(this.receive, [...this.steps, step]);
  }
}

export interface HandlerParts<S extends Received> {
  pipeline: Pipeline<S>;
  /** The last step, as Middy's handler: its response streams out. */
  handle: (state: NoInfer<S>, context: InvocationContext) => Promise<ProxyResponse>;
  /** Turns any error of any step into the response (answer-errors.ts). */
  answerError: (state: Answering | undefined, error: unknown) => ProxyResponse;
}

/**
 * The Middy handler in response-streaming mode: one middleware decodes the event, one per step
 * runs it, and the request ends (`requestEnd`) only once its after-response work is done.
 */
export function streamingHandler<S extends Received>({ pipeline, handle, answerError }: HandlerParts<S>) {
  // Middy calls the handler only when every step ran without answering or throwing: the state is then `S`.
  const handler = middy(async (_event: APIGatewayProxyEventV2, context: CarriesState & InvocationContext) => handle(context.proxyState as S, context), {
    executionMode: executionModeStreamifyResponse,
    // Only this invocation's own rows: concurrent requests (local server) don't wait for each other.
    requestEnd: async (request) => stateOf(request as unknown as MiddyRequest)?.work.drain(),
  });
  handler.use({
    before: function receive(request: MiddyRequest) {
      request.context.proxyState = pipeline.receive(request.event);
    },
    onError: function answerErrors(request: MiddyRequest) {
      return answerError(stateOf(request), request.error);
    },
  });
  for (const step of pipeline.steps) {
    handler.use({
      before: async function runStep(request: MiddyRequest): Promise<ProxyResponse | void> {
        const state = stateOf(request);
        const outcome = await step.run(state as never);
        if (outcome instanceof Answer) return outcome.response;
        Object.assign(state as object, outcome);
      },
    });
  }
  return handler;
}
