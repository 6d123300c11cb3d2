import { Client } from 'pg';
import type { DataSource, EntityManager, ObjectLiteral, Repository } from 'typeorm';
import type * as TransactionsFile from '@/database/transactions/transactions';
import type * as AuditEntityFile from '@/database/tables/audit-events.entity';
import { fromDist, useApp } from './bootstrap';

/** Node's own require (native-require.environment.js): the application's typeorm, its DataSource token. */
declare const nativeRequire: NodeJS.Require;

interface Audit {
  act<T>(
    actor: string | null,
    action: string,
    target: string | null,
    work: () => Promise<T>,
  ): Promise<T>;
}

interface PgConnection {
  once(event: 'end', listener: () => void): void;
}

/** The URL the application's pool connects with (its own test database). */
function urlOf(dataSource: DataSource): string {
  return (dataSource.options as { url?: string }).url ?? '';
}

/**
 * An action whose transaction loses its connection between two statements, on the real Postgres: TypeORM
 * releases the query runner when the connection emits its error, so the next statement fails with
 * QueryRunnerAlreadyReleasedError rather than a Postgres code. That was a 500 (and its refusal's audit row
 * was attempted on the dead runner); the rule is 503 with Retry-After, nothing of the action kept, and the
 * refusal audited on a connection of its own.
 */
describe('an action whose connection is terminated between its statements', () => {
  const t = useApp();
  const audit = () =>
    t.app.get<Audit>(fromDist<Record<string, new () => Audit>>('audit/audit.service').AuditService);
  const dataSource = () =>
    t.app.get<DataSource>(
      (nativeRequire('typeorm') as { DataSource: new () => DataSource }).DataSource,
    );
  const { tableOf } = fromDist<typeof TransactionsFile>('database/transactions/transactions');
  const { AuditEvent } = fromDist<typeof AuditEntityFile>('database/tables/audit-events.entity');
  const events = (): Repository<ObjectLiteral> => tableOf(dataSource(), AuditEvent);

  it('answers not_ready, keeps nothing of the action, and audits the refusal', async () => {
    const admin = new Client({ connectionString: urlOf(dataSource()) });
    await admin.connect();
    try {
      let released = false;
      const acting = audit().act('ann', 'act_test', 'cut', async () => {
        // A first statement of the action, written in its transaction.
        await events().query(
          `INSERT INTO audit_events (actor, action, target, outcome, details) VALUES ('ann', 'act_test_partial', 'cut', 'success', '{}')`,
        );
        const manager: EntityManager = events().manager;
        const runner = manager.queryRunner as unknown as {
          databaseConnection: PgConnection;
          isReleased: boolean;
        };
        const [{ pid }] = await events().query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
        const ended = new Promise<void>((resolve) =>
          runner.databaseConnection.once('end', resolve),
        );
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await ended;
        released = runner.isReleased;
        // The action's next statement, on the connection Postgres just dropped.
        await events().query('SELECT 1');
      });
      await expect(acting).rejects.toMatchObject({ code: 'not_ready', retryAfterSeconds: 5 });
      expect(released).toBe(true);
      const rows = await admin.query<{ action: string; outcome: string; details: unknown }>(
        `SELECT action, outcome, details FROM audit_events WHERE target = 'cut' ORDER BY id`,
      );
      expect(rows.rows).toEqual([
        { action: 'act_test', outcome: 'failure', details: { error: 'not_ready' } },
      ]);
      expect(t.logs.filter((line) => line.msg === 'audit row not written')).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  it('a refusal inside a transaction still open around the action is audited outside it', async () => {
    const { Transactions } = fromDist<typeof TransactionsFile>(
      'database/transactions/transactions',
    );
    const transactions = t.app.get<TransactionsFile.Transactions>(Transactions);
    // The outer transaction rolls back with the error; the refusal's row must not go with it.
    await expect(
      transactions.run(() =>
        audit().act('ann', 'act_test_nested', 'nested', () =>
          Promise.reject(Object.assign(new Error('refused'), { code: 'forbidden' })),
        ),
      ),
    ).rejects.toThrow('refused');
    const admin = new Client({ connectionString: urlOf(dataSource()) });
    await admin.connect();
    try {
      const rows = await admin.query(
        `SELECT outcome FROM audit_events WHERE action = 'act_test_nested'`,
      );
      expect(rows.rows).toEqual([{ outcome: 'failure' }]);
    } finally {
      await admin.end();
    }
  });
});
