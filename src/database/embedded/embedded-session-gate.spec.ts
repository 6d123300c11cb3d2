import { GatedDatabase, SessionGate } from '@/database/embedded/embedded-session-gate';

/** A protocol message: its type byte, its length, its payload (a label for the test). */
function message(type: string, payload = ''): Uint8Array {
  const body = Buffer.from(payload, 'utf8');
  const bytes = Buffer.alloc(5 + body.length);
  bytes.write(type, 0, 'latin1');
  bytes.writeInt32BE(4 + body.length, 1);
  body.copy(bytes, 5);
  return bytes;
}

/** Parse ('P') of a statement: its name (empty: the unnamed one), then its SQL. */
function parse(name: string, sql: string): Uint8Array {
  return message('P', `${name}\0${sql}\0`);
}

/**
 * A stand-in for PGlite's session that records what ran, in order, and keeps a transaction flag as
 * BEGIN/COMMIT/ROLLBACK set it: the gate's ordering is what is under test, not Postgres.
 */
class RecordingSession implements GatedDatabase {
  readonly ran: string[] = [];
  private inTransaction = false;
  private lock: Promise<unknown> = Promise.resolve();

  runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  async execProtocolRawStream(
    bytes: Uint8Array,
    options: { onRawData: (data: Uint8Array) => void },
  ): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const type = String.fromCharCode(bytes[0] ?? 0);
    const text = Buffer.from(bytes.subarray(5)).toString('utf8').replace(/\0/g, ' ').trim();
    this.record(`${type} ${text}`.trim());
    options.onRawData(new Uint8Array([1, 2]));
  }

  raw(sql: string): Promise<void> {
    this.record(`raw ${sql}`);
    return Promise.resolve();
  }

  private record(entry: string): void {
    this.ran.push(entry);
    if (/\bBEGIN\b/.test(entry)) this.inTransaction = true;
    if (/\b(COMMIT|ROLLBACK)\b/.test(entry)) this.inTransaction = false;
  }

  isInTransaction(): boolean {
    return this.inTransaction;
  }
}

function setUp() {
  const db = new RecordingSession();
  const failures: unknown[] = [];
  const gate = new SessionGate(
    db,
    (sql) => db.raw(sql),
    (error) => failures.push(error),
  );
  return { db, gate, failures };
}

const A = 1;
const B = 2;

describe('the embedded database session gate', () => {
  it('keeps a client extended-protocol cycle whole: another client runs after its Sync, not between its Parse and Execute', async () => {
    const { db, gate } = setUp();
    gate.opened(A);
    gate.opened(B);
    const first = [gate.enqueue(A, parse('', 'SELECT a'), () => undefined)];
    first.push(gate.enqueue(A, message('B'), () => undefined));
    // B's simple query arrives while A's Execute and Sync are still on their way.
    const other = gate.enqueue(B, message('Q', 'SELECT b'), () => undefined);
    await first[1];
    await gate.enqueue(A, message('E'), () => undefined);
    await gate.enqueue(A, message('S'), () => undefined);
    expect(await other).toBe(2);
    expect(db.ran).toEqual(['raw DISCARD ALL', 'P SELECT a', 'B', 'E', 'S', 'Q SELECT b']);
  });

  it('keeps a transaction whole across simple queries', async () => {
    const { db, gate } = setUp();
    gate.opened(A);
    gate.opened(B);
    await gate.enqueue(A, message('Q', 'BEGIN'), () => undefined);
    const other = gate.enqueue(B, message('Q', 'SELECT b'), () => undefined);
    await gate.enqueue(A, message('Q', 'UPDATE t'), () => undefined);
    await gate.enqueue(A, message('Q', 'COMMIT'), () => undefined);
    await other;
    expect(db.ran.slice(1)).toEqual(['Q BEGIN', 'Q UPDATE t', 'Q COMMIT', 'Q SELECT b']);
  });

  it('rolls back the transaction of a client that disconnects inside it, and lets the next one in', async () => {
    const { db, gate } = setUp();
    gate.opened(A);
    gate.opened(B);
    await gate.enqueue(A, message('Q', 'BEGIN'), () => undefined);
    const other = gate.enqueue(B, message('Q', 'SELECT b'), () => undefined);
    gate.clearQueueForHandler(A);
    await gate.clearTransactionIfNeeded(A);
    await other;
    expect(db.ran.slice(1)).toEqual(['Q BEGIN', 'raw ROLLBACK', 'raw DISCARD ALL', 'Q SELECT b']);
  });

  it('resets the session when a client closes, unless a client that prepared named statements still uses it', async () => {
    const { db, gate } = setUp();
    gate.opened(A);
    // A prepares by name (as the server's pool does its token lookup); B (the CLI) does not.
    await gate.enqueue(A, parse('drey_token_lookup', 'SELECT t'), () => undefined);
    await gate.enqueue(A, message('S'), () => undefined);
    gate.opened(B);
    await gate.enqueue(B, message('Q', 'UPDATE users'), () => undefined);
    await gate.clearTransactionIfNeeded(B);
    await gate.enqueue(A, message('Q', 'SELECT after'), () => undefined);
    // B's leaving kept A's statement; A's leaving resets the session for whoever comes next.
    await gate.clearTransactionIfNeeded(A);
    gate.opened(3);
    await gate.enqueue(3, message('Q', 'SELECT next'), () => undefined);
    expect(db.ran).toEqual([
      'raw DISCARD ALL',
      'P drey_token_lookup SELECT t',
      'S',
      'Q UPDATE users',
      'Q SELECT after',
      'raw DISCARD ALL',
      'raw DISCARD ALL',
      'Q SELECT next',
    ]);
  });

  it("resets on a pool's Terminate, before the next connection prepares the same names again", async () => {
    const { db, gate } = setUp();
    gate.opened(A);
    await gate.enqueue(A, parse('drey_token_lookup', 'SELECT t'), () => undefined);
    await gate.enqueue(A, message('S'), () => undefined);
    gate.opened(B);
    // The pool ends its idle connection and opens the next one before the old socket's close is seen.
    const leaving = gate.enqueue(A, message('X'), () => undefined);
    const again = gate.enqueue(B, parse('drey_token_lookup', 'SELECT t'), () => undefined);
    await Promise.all([leaving, again]);
    expect(db.ran.slice(1)).toEqual([
      'P drey_token_lookup SELECT t',
      'S',
      'X',
      'raw DISCARD ALL',
      'P drey_token_lookup SELECT t',
    ]);
  });

  it('refuses the queued messages of a client that disconnected', async () => {
    const { gate } = setUp();
    gate.opened(A);
    gate.opened(B);
    await gate.enqueue(A, message('Q', 'BEGIN'), () => undefined);
    const orphan = gate.enqueue(B, message('Q', 'SELECT b'), () => undefined);
    gate.clearQueueForHandler(B);
    await expect(orphan).rejects.toThrow('Handler disconnected');
  });
});
