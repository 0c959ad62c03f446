import type { ServerResponse } from 'node:http';
import { ServerStoppedError } from '../base/errors';

/**
 * The requests the local server is answering, for a bounded shutdown: once stopping, every
 * response closes its connection when it ends (an idle kept-alive socket would otherwise carry
 * new requests forever), and at the deadline the rest are cut.
 */
export class InFlightRequests {
  private readonly requests = new Map<ServerResponse, AbortController>();
  private stopping = false;
  private waiters: Array<() => void> = [];

  /** Registers a request. The returned controller is aborted when the client leaves or the shutdown cuts it. */
  begin(response: ServerResponse): AbortController {
    const controller = new AbortController();
    this.requests.set(response, controller);
    if (this.stopping) closeConnectionAfter(response);
    return controller;
  }

  end(response: ServerResponse): void {
    this.requests.delete(response);
    if (this.requests.size === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  get size(): number {
    return this.requests.size;
  }

  /** From now on, no response keeps its connection open. */
  stopKeepingAlive(): void {
    this.stopping = true;
    for (const response of this.requests.keys()) closeConnectionAfter(response);
  }

  /** Resolves true once no request is in flight, false if `timeoutMs` passes first. */
  async settled(timeoutMs: number): Promise<boolean> {
    if (this.requests.size === 0) return true;
    return new Promise((done) => {
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      this.waiters.push(() => {
        clearTimeout(timer);
        done(true);
      });
    });
  }

  /** Stops the upstream calls still running and closes their responses; their rows say the server cut them. */
  cutAll(): void {
    for (const [response, controller] of this.requests) {
      // The reason travels with the signal: the row says the server cut the request, not that the client left.
      controller.abort(new ServerStoppedError());
      response.destroy();
    }
  }
}

function closeConnectionAfter(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('connection', 'close');
  else if (!response.writableFinished) response.once('finish', () => response.socket?.end());
  else response.socket?.end();
}
