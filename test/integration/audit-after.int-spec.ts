import type { DataSource } from 'typeorm';
import { fromDist, useApp } from './bootstrap';

/** Node's own require (native-require.environment.js): the application's typeorm, its DataSource token. */
declare const nativeRequire: NodeJS.Require;

interface Entry {
  action: string;
  actor: string | null;
  target?: string | null;
  outcome?: 'success' | 'failure';
  details?: Record<string, unknown>;
}
interface Audit {
  recordAfter(entry: Entry): Promise<void>;
  beforeApplicationShutdown(): Promise<void>;
  list(filter: { action?: string; limit: number; offset: number }): Promise<{
    events: Array<Record<string, unknown>>;
  }>;
}

/**
 * The audit rows written after the answer (AuditService.recordAfter, the MCP tool calls'), on the real
 * Postgres: written in order, many rows an INSERT, before the log is listed and before shutdown closes
 * the database; a failed INSERT is logged with its rows.
 */
describe('audit rows written after the answer', () => {
  const t = useApp();
  const audit = () =>
    t.app.get<Audit>(fromDist<Record<string, new () => Audit>>('audit/audit.service').AuditService);
  const dataSource = () =>
    t.app.get<DataSource>(
      (nativeRequire('typeorm') as { DataSource: new () => DataSource }).DataSource,
    );

  it('writes the rows of one turn in order, with their columns, and lists them', async () => {
    const spy = t.spyOn(
      'database/tables/audit-events.repository',
      'AuditEventsRepository',
      'appendMany',
    );
    await Promise.all([
      audit().recordAfter({
        action: 'after_test',
        actor: 'ann',
        target: 'one',
        details: { n: 1, s: 'é' },
      }),
      audit().recordAfter({
        action: 'after_test',
        actor: null,
        target: null,
        outcome: 'failure',
        details: { error: 'forbidden' },
      }),
      audit().recordAfter({ action: 'after_test', actor: 'bob', target: 'three' }),
    ]);
    const { events } = await audit().list({ action: 'after_test', limit: 10, offset: 0 });
    expect(spy).toHaveBeenCalledTimes(1);
    expect(
      events.map((event) => [event.actor, event.target, event.outcome, event.details]),
    ).toEqual([
      ['bob', 'three', 'success', {}],
      [null, null, 'failure', { error: 'forbidden' }],
      ['ann', 'one', 'success', { n: 1, s: 'é' }],
    ]);
  });

  it('writes every waiting row at shutdown, before the database closes', async () => {
    // A slow INSERT: shutdown must wait for it, not only start it.
    const repository = 'database/tables/audit-events.repository';
    type Write = (...args: unknown[]) => Promise<void>;
    const write =
      fromDist<Record<string, { prototype: { appendMany: Write } }>>(repository)
        .AuditEventsRepository.prototype.appendMany;
    t.spyOn(repository, 'AuditEventsRepository', 'appendMany').mockImplementation(async function (
      this: unknown,
      ...args: unknown[]
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return write.apply(this, args);
    });
    void audit().recordAfter({ action: 'after_shutdown', actor: 'ann', target: 'x' });
    void audit().recordAfter({ action: 'after_shutdown', actor: 'ann', target: 'y' });
    await audit().beforeApplicationShutdown();
    // Read behind the service's back: list() would write the waiting rows itself.
    const rows: Array<{ target: string }> = await dataSource().query(
      "SELECT target FROM audit_events WHERE action = 'after_shutdown' ORDER BY id",
    );
    expect(rows.map((row) => row.target)).toEqual(['x', 'y']);
  });

  it('logs the rows of a failed INSERT and writes the next ones', async () => {
    const spy = t.spyOn(
      'database/tables/audit-events.repository',
      'AuditEventsRepository',
      'appendMany',
    );
    spy.mockRejectedValueOnce(new Error('the database went away'));
    void audit().recordAfter({ action: 'after_lost', actor: 'ann', target: 'lost' });
    await audit().beforeApplicationShutdown();
    await audit().recordAfter({ action: 'after_lost', actor: 'ann', target: 'kept' });
    const { events } = await audit().list({ action: 'after_lost', limit: 10, offset: 0 });
    expect(events.map((event) => event.target)).toEqual(['kept']);
    const logged = t.logs.find((line) => line.msg === 'audit rows not written');
    expect(logged).toMatchObject({
      level: 'error',
      // The spec's Error is of another realm than the application's: its message is in the text.
      error: expect.stringContaining('the database went away'),
      rows: [expect.objectContaining({ action: 'after_lost', target: 'lost', actor: 'ann' })],
    });
  });
});
