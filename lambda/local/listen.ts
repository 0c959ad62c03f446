import type { Server } from 'node:http';

export class PortUnavailableError extends Error {}

/** Binds the port before anything else is created, and turns the usual failures into one line naming PORT. */
export async function listenOrExplain(server: Server, port: number, host: string): Promise<void> {
  await new Promise<void>((done, fail) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const alternative = port === 8787 ? 8788 : port + 1;
      if (error.code === 'EADDRINUSE') {
        fail(
          new PortUnavailableError(
            `Port ${port} on ${host} is already in use by another program: stop it, or choose another port with PORT (e.g. PORT=${alternative} npm start).`,
          ),
        );
      } else if (error.code === 'EACCES') {
        fail(
          new PortUnavailableError(
            `Port ${port} on ${host} needs more privileges than this user has: choose another port with PORT (e.g. PORT=${alternative} npm start).`,
          ),
        );
      } else {
        fail(error);
      }
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      done();
    });
  });
}
