import { Server, Socket, createConnection, createServer } from 'node:net';
import { AddressInfo } from 'node:net';

/**
 * A TCP proxy between the service and a real server (Postgres, Redis) that can cut the line: `down()`
 * resets every open connection and refuses new ones, as a stopped or unreachable server would, and `up()`
 * lets connections through again. The real server keeps running for the other tests.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private available = true;
  port = 0;
  /** Connections refused while down: a client that tried and found the line cut. */
  refused = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<number> {
    this.server = createServer((client) => {
      if (!this.available) {
        this.refused++;
        client.resetAndDestroy();
        return;
      }
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      this.track(client);
      this.track(upstream);
      client.pipe(upstream).pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close);
      upstream.on('error', close);
      client.on('close', close);
      upstream.on('close', close);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server?.address() as AddressInfo).port;
    return this.port;
  }

  down(): void {
    this.available = false;
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
  }

  up(): void {
    this.available = true;
  }

  stop(): Promise<void> {
    this.down();
    // Not waiting for close(): a socket of a process that was killed may linger half-open.
    this.server?.close();
    this.server?.unref();
    return Promise.resolve();
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }
}

/** The URL with its host and port replaced by the proxy's. */
export function throughProxy(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(port);
  return parsed.toString();
}
