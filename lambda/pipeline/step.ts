import type { ProxyResponse } from '../http/response';
import type { Completion } from '../usage/build-row';
import type { StoreReads } from './state';

/**
 * A response that ends the request: a step's early answer (the steps after it don't run: a
 * preflight, a cache hit) or the forward step's. `ended` settles once its body has gone out, with
 * what the request's usage row records (none for an answer that leaves no row).
 */
export class Answer {
  constructor(
    readonly response: ProxyResponse,
    readonly ended?: Promise<Completion>,
  ) {}
}

/**
 * What the step that starts the request's store reads proved, with the reads themselves: they go to
 * Middy's `request.internal`, where each later step awaits the one it needs (pipeline.ts).
 */
export class Prefetched<Out extends object> {
  constructor(
    readonly proved: Out,
    readonly reads: StoreReads,
  ) {}
}

/**
 * One step of the pipeline: it needs the state `In` earlier steps proved, and adds `Out` to it,
 * answers early, or throws a typed error (answer-errors.ts turns it into a response). `reads` are
 * the store reads started before the first step that awaits one; only a step whose input proves
 * the token was identified (`Identified`) may await them.
 */
export interface Step<In, Out extends object> {
  readonly name: string;
  // A property, not a method: its parameter is then checked strictly (a method's would be bivariant and
  // accept a step placed before the one proving its input).
  readonly run: (
    state: In,
    reads: StoreReads,
  ) => Out | Answer | Prefetched<Out> | Promise<Out | Answer | Prefetched<Out>>;
}
