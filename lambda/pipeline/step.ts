import type { ProxyResponse } from '../http/response';

/** A step's early answer: the steps after it don't run and this response goes out (a cache hit, the API). */
export class Answer {
  constructor(readonly response: ProxyResponse) {}
}

/**
 * One step of the pipeline: it needs the state `In` earlier steps proved, and adds `Out` to it,
 * answers early, or throws a typed error (answer-errors.ts turns it into a response).
 */
export interface Step<In, Out extends object> {
  readonly name: string;
  // A property, not a method: its parameter is then checked strictly (a method's would be bivariant and
  // accept a step placed before the one proving its input).
  readonly run: (state: In) => Out | Answer | Promise<Out | Answer>;
}
