import type { Epochs } from '@/cache/redis-epoch';
import type { TokenRecord } from '@/database/token-records/token-lookup';
import { KEPT_MS, TokenRecords } from '@/database/token-records/token-records';
import type { TokenChanges } from '@/database/token-records/token-changes';

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

/** One process's view of the shared value: `fail` cuts this process alone off Redis (a partition, a lag). */
class View implements Epochs {
  fail = false;
  constructor(private readonly shared: Shared) {}
  current(): Promise<string | null> {
    return this.fail ? Promise.reject(new Error('unreachable')) : this.shared.current();
  }
  advance(): Promise<void> {
    return this.fail ? Promise.reject(new Error('unreachable')) : this.shared.advance();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Postgres' LISTEN/NOTIFY as the processes hear it: one channel per process, on one bus. */
class Bus {
  readonly channels: Channel[] = [];
  fail = false;
  channel(): Channel {
    const channel = new Channel(this);
    this.channels.push(channel);
    return channel;
  }
}
class Channel implements TokenChanges {
  listening = true;
  readonly listeners: (() => void)[] = [];
  constructor(private readonly bus: Bus) {}
  subscribe(listener: () => void): void {
    this.listeners.push(listener);
  }
  announce(): Promise<void> {
    if (this.bus.fail) return Promise.reject(new Error('Connection terminated'));
    for (const channel of this.bus.channels)
      if (channel !== this && channel.listening)
        channel.listeners.forEach((listener) => listener());
    return Promise.resolve();
  }
  /** The listener's connection lost. */
  lose(): void {
    this.listening = false;
    this.listeners.forEach((listener) => listener());
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

  describe('with the announcements through Postgres', () => {
    let bus: Bus;
    const replica = (view: Epochs) =>
      new TokenRecords(rows.findActive, view, (_error, hint) => lines.push(hint), bus.channel());
    beforeEach(() => {
      bus = new Bus();
    });

    it('a change the maker could not write to Redis, while the others still read it, is refused by them at once', async () => {
      const viewA = new View(shared);
      const a = replica(viewA);
      const b = replica(new View(shared));
      expect(await b.find('t')).toEqual(record('t'));
      expect(await b.find('t')).toEqual(record('t'));
      expect(rows.reads).toBe(1);
      // Redis is back for b, not yet for a; a revokes.
      viewA.fail = true;
      rows.rows.delete('t');
      await a.changed();
      expect(lines).toEqual(['announced through Postgres instead']);
      expect(await b.find('t')).toBeUndefined();
    });

    it('keeps nothing while it does not listen, and forgets what it kept when it stops', async () => {
      const channel = bus.channel();
      const b = new TokenRecords(rows.findActive, new View(shared), () => undefined, channel);
      await b.find('t');
      await b.find('t');
      expect(rows.reads).toBe(1);
      channel.lose();
      await b.find('t');
      await b.find('t');
      expect(rows.reads).toBe(3);
    });

    it('does not keep a record read while the listener was lost', async () => {
      const channel = bus.channel();
      const b = new TokenRecords(rows.findActive, new View(shared), () => undefined, channel);
      rows.during = () => {
        rows.during = undefined;
        channel.lose();
        channel.listening = true;
      };
      await b.find('t');
      await b.find('t');
      expect(rows.reads).toBe(2);
    });

    it('says when a change could be announced neither through Redis nor through Postgres', async () => {
      const viewA = new View(shared);
      const a = replica(viewA);
      viewA.fail = true;
      bus.fail = true;
      await a.changed();
      expect(lines).toEqual([
        `nor through Postgres (Connection terminated): other processes apply it within ${KEPT_MS / 1000} s`,
      ]);
    });
  });
});
