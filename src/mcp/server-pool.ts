import { InMemoryTransport } from '@modelcontextprotocol/server';
import type {
  AuthInfo,
  JSONRPCMessage,
  JSONRPCRequest,
  McpServer,
} from '@modelcontextprotocol/server';

/** One kept server and the client end of the SDK's in-memory transport it is connected to. */
class PooledServer {
  private waiting?: { id: JSONRPCRequest['id']; resolve: (answer: JSONRPCMessage) => void };

  private constructor(
    readonly server: McpServer,
    private readonly client: InMemoryTransport,
  ) {}

  static async connect(server: McpServer): Promise<PooledServer> {
    const [client, side] = InMemoryTransport.createLinkedPair();
    const pooled = new PooledServer(server, client);
    client.onmessage = (message) => pooled.receive(message);
    await server.connect(side);
    await client.start();
    return pooled;
  }

  /** Hands the server one request, with its caller as `authInfo`, and resolves with its answer. */
  exchange(message: JSONRPCRequest, authInfo: AuthInfo): Promise<JSONRPCMessage> {
    return new Promise((resolve, reject) => {
      this.waiting = { id: message.id, resolve };
      this.client.send(message, { authInfo }).catch(reject);
    });
  }

  /** The answer to the request in hand; anything else the server sends (none of Drey's tools do) is dropped. */
  private receive(message: JSONRPCMessage): void {
    const waiting = this.waiting;
    if (waiting === undefined || 'method' in message || !('id' in message)) return;
    if (message.id !== waiting.id) return;
    this.waiting = undefined;
    waiting.resolve(message);
  }

  close(): void {
    this.server.close().catch(() => undefined);
  }
}

/**
 * MCP servers kept per caller view and handed one request at a time, over the SDK's own in-memory
 * transport, rather than a server built, connected and closed per HTTP request. A server's tools are the
 * view's (what a caller of that view may open, with its enums and bounds); who calls is the request's
 * `authInfo`, which the SDK hands every handler in its context. A server holds no state between requests
 * of this pool's kind: they are requests other than `initialize` (whose client capabilities and protocol
 * version a server would keep), each answered before the server serves the next.
 *
 * Bounded: at most `maxIdle` servers wait in all, the view that waited longest giving one up to a newer;
 * {@link clear} drops them all (a build changes every view).
 */
export class ServerPool<View extends object> {
  private readonly idle = new Map<View, PooledServer[]>();
  private idleCount = 0;

  constructor(private readonly maxIdle: number) {}

  /** Answers `message` with an idle server of `view`, or one `make` builds. */
  async exchange(
    view: View,
    make: () => Promise<McpServer>,
    message: JSONRPCRequest,
    authInfo: AuthInfo,
  ): Promise<JSONRPCMessage> {
    const pooled = this.take(view) ?? (await PooledServer.connect(await make()));
    let answered = false;
    try {
      const answer = await pooled.exchange(message, authInfo);
      answered = true;
      return answer;
    } finally {
      // A server whose exchange failed is not trusted with another request.
      if (answered) this.give(view, pooled);
      else pooled.close();
    }
  }

  /** Closes every waiting server: a new build makes new views. */
  clear(): void {
    for (const servers of this.idle.values()) for (const pooled of servers) pooled.close();
    this.idle.clear();
    this.idleCount = 0;
  }

  get size(): number {
    return this.idleCount;
  }

  private take(view: View): PooledServer | undefined {
    const servers = this.idle.get(view);
    const pooled = servers?.pop();
    if (pooled === undefined) return undefined;
    this.idleCount--;
    if (servers!.length === 0) this.idle.delete(view);
    return pooled;
  }

  private give(view: View, pooled: PooledServer): void {
    if (this.maxIdle === 0) {
      pooled.close();
      return;
    }
    // Full: the view that has waited longest gives up a server.
    if (this.idleCount >= this.maxIdle) this.take(this.idle.keys().next().value as View)?.close();
    const servers = this.idle.get(view) ?? [];
    servers.push(pooled);
    // Last in the map's order: the view served most recently.
    this.idle.delete(view);
    this.idle.set(view, servers);
    this.idleCount++;
  }
}
