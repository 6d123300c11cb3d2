import type { Epochs } from '@/cache/redis-epoch';
import type { TokenRecord } from '@/database/tables/token-lookup';
import { KEPT_MS, TokenRecords } from '@/database/tables/token-records';

/** Postgres as the lookup sees it: rows that tests change, and the reads made. */
class Rows {
  readonly rows = new Map<string, TokenRecord>();
  reads = 0;
  /** Runs while a read is in flight (a write committed meanwhile). */
  during?: () => void;
  readonly findActive = (id: string): Promise<TokenRecord | undefined> => {
    this.reads++;
    const row = this.rows.get(id);
    this.during?.();
    return Promise.resolve(row);
  };
}

/** The shared value, as Redis holds it; `fail` makes reads reject (Redis unreachable). */
class Shared implements Epochs {
  value: string | null = null;
  fail = false;
  private next = 0;
  current(): Promise<string | null> {
    return this.fail ? Promise.reject(new Error('unreachable')) : Promise.resolve(this.value);
  }
  advance(): Promise<void> {
    if (this.fail) return Promise.reject(new Error('unreachable'));
    this.value = `v${++this.next}`;
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const record = (id: string, expiresAt: Date | null = null): TokenRecord => ({
  token_id: id,
  user_id: 'u',
  username: 'ann',
  is_admin: false,
  fields: {},
  expires_at: expiresAt,
});

describe('TokenRecords', () => {
  const lines: string[] = [];
  const make = (epochs: Epochs | null) =>
    new TokenRecords(rows.findActive, epochs, (_error, hint) => lines.push(hint));
  let rows: Rows;
  let shared: Shared;
  let records: TokenRecords;
  beforeEach(() => {
    rows = new Rows();
    shared = new Shared();
    records = make(shared);
    rows.rows.set('t', record('t'));
    lines.length = 0;
  });
  afterEach(() => jest.useRealTimers());

  it('reads a record once while nothing is announced', async () => {
    await records.find('t');
    expect(await records.find('t')).toEqual(record('t'));
    expect(rows.reads).toBe(1);
  });

  it('reads again after a change announced by any process, and finds it gone', async () => {
    const other = make(shared);
    await records.find('t');
    rows.rows.delete('t');
    await other.changed();
    expect(await records.find('t')).toBeUndefined();
    expect(rows.reads).toBe(2);
  });

  it('does not keep a record read before a change that another request of the process has seen', async () => {
    // The read answers the row as it was; meanwhile the token is revoked, the change announced, and a
    // request that came later reads the new value.
    let later: Promise<unknown> | undefined;
    rows.during = () => {
      rows.during = undefined;
      rows.rows.delete('t');
      void shared.advance();
      later = records.find('other');
    };
    expect(await records.find('t')).toEqual(record('t'));
    await later;
    expect(await records.find('t')).toBeUndefined();
  });

  it('never keeps a missing record, nor one past its expiry or kept longer than KEPT_MS', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    expect(await records.find('new')).toBeUndefined();
    rows.rows.set('new', record('new'));
    expect(await records.find('new')).toEqual(record('new'));
    rows.rows.set('soon', record('soon', new Date(1_000_000 + 5_000)));
    await records.find('soon');
    await records.find('soon');
    expect(rows.reads).toBe(3);
    jest.setSystemTime(1_000_000 + 5_000);
    await records.find('soon');
    expect(rows.reads).toBe(4);
    jest.setSystemTime(1_000_000 + KEPT_MS);
    await records.find('new');
    expect(rows.reads).toBe(5);
  });

  it('reads Postgres every time without Redis, or while Redis cannot be read', async () => {
    const alone = make(null);
    await alone.find('t');
    await alone.find('t');
    expect(rows.reads).toBe(2);
    await records.find('t');
    shared.fail = true;
    await records.find('t');
    await records.find('t');
    expect(rows.reads).toBe(5);
  });

  it('says when it could not announce a change, and still forgets its own records', async () => {
    await records.find('t');
    shared.fail = true;
    await records.changed();
    expect(lines).toEqual([`other processes apply it within ${KEPT_MS / 1000} s`]);
    shared.fail = false;
    await records.find('t');
    expect(rows.reads).toBe(2);
  });
});
