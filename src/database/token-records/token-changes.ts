import { randomUUID } from 'node:crypto';
import { Client } from 'pg';

/** The Postgres channel that tells every process that token records changed. */
export const TOKEN_CHANGES_CHANNEL = 'drey_token_records';

/**
 * A second way for processes to hear that token records changed, for when the first (the epoch in Redis)
 * could not be written by the process that made the change: Redis stopped or restarting, or reachable from
 * the other processes and not from this one (a reconnection that lags behind theirs, a partition). Without
 * it, a process that still read the old epoch kept serving a revoked token for up to KEPT_MS (seen in the
 * fault drill while Redis restarted).
 */
export interface TokenChanges {
  /**
   * True while every announcement reaches this process. While false, TokenRecords keeps nothing and reads
   * Postgres for every turn.
   */
  readonly listening: boolean;
  /** Calls `listener` on every announcement (this process's own too) and whenever listening stops. */
  subscribe(listener: () => void): void;
  /**
   * Tells every listening process; resolves once this process has heard its own announcement back (when it
   * listens), so Postgres has queued it to every other listener. Rejects when it could not be sent.
   */
  announce(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Announces, in the transaction of the statement just run through `table` (when one is open), that token
 * records changed: Postgres delivers it when, and only if, that transaction commits, whether or not the
 * answer of the COMMIT reaches this process (a connection dropped then answers 503, and the change, done,
 * would otherwise wait for KEPT_MS on other processes). A command line changing users or tokens tells the
 * servers the same way.
 */
export async function announceInTransaction(table: {
  query(sql: string, parameters: unknown[]): Promise<unknown>;
}): Promise<void> {
  await table.query('SELECT pg_notify($1, $2)', [TOKEN_CHANGES_CHANNEL, '']);
}

/** How long an announcement's echo, or the heartbeat's, may take before the listener is taken for lost. */
const ECHO_MS = 2_000;
/** Between heartbeats: a connection that died without a word (no RST) is found within this and ECHO_MS. */
const HEARTBEAT_MS = 5_000;
/** What a heartbeat's payload starts with. */
const BEAT = 'beat:';
/** Before connecting again after the connection was lost. */
const RECONNECT_MS = 1_000;

/**
 * {@link TokenChanges} over Postgres' LISTEN/NOTIFY, on a connection of its own beside the pool: Postgres
 * is what every process can already reach when it serves a token at all. The listener sends itself a
 * heartbeat (a NOTIFY it must hear back): a connection that is silently gone stops counting as listening
 * within seconds, instead of TCP keep-alive's minutes.
 */
export class PostgresTokenChanges implements TokenChanges {
  listening = false;
  private client?: Client;
  private closed = false;
  private readonly listeners: (() => void)[] = [];
  private readonly echoes = new Map<string, () => void>();
  private heartbeat?: NodeJS.Timeout;
  private reconnect?: NodeJS.Timeout;

  /**
   * @param url the database's URL
   * @param send sends a NOTIFY through the pool, so an announcement goes out while this listener is down
   * @param lost told when the listener's connection is lost (once per loss)
   */
  constructor(
    private readonly url: string,
    private readonly send: (channel: string, payload: string) => Promise<void>,
    private readonly lost: (error: unknown) => void,
  ) {}

  /** Connects in the background; until it listens, TokenRecords reads Postgres for every turn. */
  start(): void {
    void this.connect();
  }

  subscribe(listener: () => void): void {
    this.listeners.push(listener);
  }

  async announce(): Promise<void> {
    const id = randomUUID();
    const heard = this.listening ? this.echo(id) : undefined;
    heard?.catch(() => undefined);
    try {
      await this.send(TOKEN_CHANGES_CHANNEL, id);
      await heard;
    } finally {
      this.echoes.delete(id);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnect);
    const client = this.client;
    this.drop(client);
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ connectionString: this.url, keepAlive: true });
    this.client = client;
    client.on('notification', (message) => this.heard(message.payload));
    client.on('error', (error) => this.fail(client, error));
    client.on('end', () => this.fail(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${TOKEN_CHANGES_CHANNEL}`);
    } catch (error) {
      this.fail(client, error);
      return;
    }
    if (this.client !== client) return;
    this.listening = true;
    this.heartbeat = setInterval(() => void this.beat(client), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private async beat(client: Client): Promise<void> {
    const id = `${BEAT}${randomUUID()}`;
    const heard = this.echo(id);
    try {
      await client.query(`SELECT pg_notify($1, $2)`, [TOKEN_CHANGES_CHANNEL, id]);
      await heard;
    } catch (error) {
      this.fail(client, error);
    } finally {
      this.echoes.delete(id);
    }
  }

  private echo(id: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no echo from Postgres within ${ECHO_MS} ms`)),
        ECHO_MS,
      );
      timer.unref();
      this.echoes.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private heard(payload: string | undefined): void {
    const echo = payload === undefined ? undefined : this.echoes.get(payload);
    if (echo) {
      echo();
      // This process forgot its records when it made the change it announced.
      return;
    }
    // Another process's heartbeat is no change.
    if (payload?.startsWith(BEAT)) return;
    for (const listener of this.listeners) listener();
  }

  private fail(client: Client, error: unknown): void {
    if (this.client !== client) return;
    const was = this.listening;
    this.drop(client);
    client.end().catch(() => undefined);
    if (was) this.lost(error);
    if (!this.closed) {
      this.reconnect = setTimeout(() => void this.connect(), RECONNECT_MS);
      this.reconnect.unref();
    }
  }

  /** Stops counting as listening: what was kept while it listened is forgotten. */
  private drop(client: Client | undefined): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    clearInterval(this.heartbeat);
    for (const listener of this.listeners) listener();
  }
}
