import { createServer } from 'node:net';

/**
 * Whether `port` on `host` can be listened on, tried before the slow part of a start (seconds of modules
 * and the database), so that a port another process holds is said at once rather than as Node's raw
 * `EADDRINUSE` once everything else has started. The port is released again at once; another process may
 * still take it before the service listens, and then the same sentence comes from the listen itself.
 */
export function probePort(port: number, host: string): Promise<NodeJS.ErrnoException | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/** The one line a start that cannot listen ends with: which port, and which setting to change. */
export function portProblem(error: unknown, port: number, host: string): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `port ${port} on ${host}`;
  if (code === 'EADDRINUSE') {
    return (
      `Cannot listen: ${where} is in use by another process (another Drey, perhaps). Stop that ` +
      `process, or set PORT to a free port (for example PORT=${port === 65535 ? port - 1 : port + 1}).`
    );
  }
  if (code === 'EACCES') {
    return (
      `Cannot listen: ${where} needs privileges this process does not have (ports below 1024 do): ` +
      'set PORT to a port from 1024 up.'
    );
  }
  if (code === 'EADDRNOTAVAIL') {
    return `Cannot listen on ${host}: no network interface of this machine has that address; check HOST.`;
  }
  return undefined;
}
