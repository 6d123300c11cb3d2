/*
 * PGlite is one Postgres session. pglite-socket's own queue hands it to its client connections message by
 * message, keeping only an open transaction together. That is safe for one client at a time (the server's
 * pool has one connection), but not for a second one beside it: a simple Query from one client arriving
 * between another's Parse/Bind and its Execute destroys that client's unnamed statement and portal. A
 * command line that writes through the running server's database (`drey users reset-password`) is such a
 * second client, so this gate replaces that queue: a client owns the session from its first message of a
 * cycle until the cycle ends (a Sync, a simple Query, the startup message) outside a transaction; only then
 * may the next client in line (first come, first served) take it.
 *
 * Session state outlives a connection (named prepared statements, SET values). When a client closes and no
 * other client that prepared named statements remains, the session is reset (DISCARD ALL) at the next point
 * where no client owns it, as a connection pooler does between clients: the server's pool reconnects after
 * 10 s idle and prepares `drey_token_lookup` again, which would otherwise fail with "already exists".
 * Clients other than the server's pool (the CLI through TypeORM) prepare nothing by name.
 */

/** What the gate needs of PGlite (the parts pglite-socket's queue used). */
export interface GatedDatabase {
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  execProtocolRawStream(
    message: Uint8Array,
    options: { onRawData: (data: Uint8Array) => void },
  ): Promise<unknown>;
  isInTransaction(): boolean;
}

interface Item {
  /** 0: the gate's own reset. */
  client: number;
  run(): Promise<number>;
  endsCycle: boolean;
  resolve(bytes: number): void;
  reject(error: unknown): void;
}

const RESET = 0;

/** The startup message has no type byte: its second int32 is the protocol version, 3.0. */
function isStartup(message: Uint8Array): boolean {
  return (
    message.length >= 8 &&
    Buffer.from(message.buffer, message.byteOffset, message.length).readInt32BE(4) === 196608
  );
}

function typeOf(message: Uint8Array): string {
  return isStartup(message) ? 'startup' : String.fromCharCode(message[0] ?? 0);
}

export class SessionGate {
  private readonly queue: Item[] = [];
  private owner: number | null = null;
  private running = false;
  private readonly attached = new Set<number>();
  private readonly closed = new Set<number>();
  /** Clients that prepared a named statement: their state must survive the others' resets. */
  private readonly named = new Set<number>();

  constructor(
    private readonly db: GatedDatabase,
    /** Runs one statement on the raw session, inside the exclusive section. */
    private readonly runRaw: (sql: string) => Promise<void>,
    private readonly onResetFailure: (error: unknown) => void,
  ) {}

  /** A client connected; the first of an idle session starts from a reset one. */
  opened(client: number): void {
    if (this.attached.size === 0) this.enqueueReset();
    this.attached.add(client);
  }

  /** pglite-socket's handler calls these three (it was written against its own queue manager). */
  enqueue(
    client: number,
    message: Uint8Array,
    onData: (data: Uint8Array) => void,
  ): Promise<number> {
    const type = typeOf(message);
    // Parse ('P'): int32 length, then the statement's name (empty for the unnamed statement).
    const named = type === 'P' && message.length > 5 && message[5] !== 0;
    return new Promise((resolve, reject) => {
      this.queue.push({
        client,
        endsCycle: type === 'S' || type === 'Q' || type === 'startup' || type === 'X',
        run: async () => {
          let bytes = 0;
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(message, {
              onRawData: (data) => {
                bytes += data.length;
                onData(data);
              },
            }),
          );
          if (named) this.named.add(client);
          // Terminate: a pool closing an idle connection says so before the socket closes, and before it
          // opens the next one; leaving here resets the session before that one's first message.
          if (type === 'X') this.leave(client);
          return bytes;
        },
        resolve,
        reject,
      });
      void this.process();
    });
  }

  clearQueueForHandler(client: number): void {
    for (let at = this.queue.length - 1; at >= 0; at--) {
      const item = this.queue[at];
      if (item?.client !== client) continue;
      this.queue.splice(at, 1);
      item.reject(new Error('Handler disconnected'));
    }
  }

  /** Called when a client's connection ends: its open transaction is rolled back, the session freed. */
  async clearTransactionIfNeeded(client: number): Promise<void> {
    this.leave(client);
    if (this.owner === client && !this.running) await this.free();
    void this.process();
  }

  private leave(client: number): void {
    if (this.closed.has(client)) return;
    this.closed.add(client);
    this.attached.delete(client);
    this.named.delete(client);
    // Its leftovers (statements, settings) matter to nobody, unless a client that relies on its own named
    // statements still uses the session (then the leftovers are those of a client without any). The reset
    // goes first in line: a client already waiting may be about to prepare the same names again.
    if (this.named.size === 0) this.enqueueReset(true);
  }

  private enqueueReset(first = false): void {
    const reset: Item = {
      client: RESET,
      endsCycle: true,
      run: async () => {
        await this.db.runExclusive(async () => {
          if (this.db.isInTransaction()) await this.runRaw('ROLLBACK');
          await this.runRaw('DISCARD ALL');
        });
        return 0;
      },
      resolve: () => undefined,
      reject: (error) => this.onResetFailure(error),
    };
    if (first) this.queue.unshift(reset);
    else this.queue.push(reset);
  }

  /** Ends the owner's turn; a transaction it left open (it disconnected inside one) is rolled back. */
  private async free(): Promise<void> {
    if (this.db.isInTransaction()) {
      await this.db.runExclusive(() => this.runRaw('ROLLBACK')).catch(this.onResetFailure);
    }
    this.owner = null;
  }

  private async process(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const at =
          this.owner === null ? 0 : this.queue.findIndex((item) => item.client === this.owner);
        // The owner's next message has not arrived yet: the others wait for it.
        if (at < 0 || at >= this.queue.length) break;
        const [item] = this.queue.splice(at, 1) as [Item];
        this.owner = item.client;
        try {
          item.resolve(await item.run());
        } catch (error) {
          item.reject(error);
        }
        if (this.closed.has(item.client)) await this.free();
        else if (item.endsCycle && !this.db.isInTransaction()) this.owner = null;
      }
    } finally {
      this.running = false;
    }
  }
}
