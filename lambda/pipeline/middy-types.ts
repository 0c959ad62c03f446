import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { IncomingRequest } from '../http/request';
import type { ProxyResponse } from '../http/response';
import type { BackgroundWork } from '../background-work';
import type { Dialect } from '../providers/types';
import type { ProxyState } from './state';

/** What the pipeline keeps per invocation beside middy's own request fields. */
export interface PipelineData {
  incoming: IncomingRequest;
  /** The error shape to answer in: the endpoint's dialect, or the API's. */
  dialect: Dialect;
  /** CORS headers for this request's origin (empty for other origins). */
  cors: Record<string, string>;
  /** Work this request leaves running after its response (row writes); the invocation ends after it. */
  work: BackgroundWork;
  proxy?: ProxyState;
}

export interface PipelineRequest {
  event: APIGatewayProxyEventV2;
  context: Context;
  response?: ProxyResponse;
  error?: unknown;
  internal: Record<string, unknown>;
}

export interface Middleware {
  before?: (request: PipelineRequest) => Promise<ProxyResponse | void> | ProxyResponse | void;
  onError?: (request: PipelineRequest) => Promise<ProxyResponse | void> | ProxyResponse | void;
}

// Keyed by the event object, because middy hands the final handler only (event, context).
const dataByEvent = new WeakMap<object, PipelineData>();

export function setPipelineData(event: object, data: PipelineData): void {
  dataByEvent.set(event, data);
}

export function pipelineData(event: object): PipelineData | undefined {
  return dataByEvent.get(event);
}

export function proxyState(event: object): ProxyState {
  const state = dataByEvent.get(event)?.proxy;
  if (!state) throw new Error('pipeline step ran outside a proxy request');
  return state;
}
