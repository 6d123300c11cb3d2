import { spawnSync } from 'node:child_process';
import { cliBuildId, leftovers, processAlive, writerOf } from '@/engine/process/leftovers';

const LIVE = 100;
const DEAD = 200;
const alive = (pid: number) => pid === LIVE;

describe('leftovers of cut builds', () => {
  it('reads the writer from the names that carry one', () => {
    expect(writerOf(`${cliBuildId(4321, new Date('2026-11-26T00:00:00.123Z'))}.duckdb`)).toBe(4321);
    expect(writerOf('9d1c.duckdb.77.part')).toBe(77);
    expect(writerOf('current.88.tmp')).toBe(88);
    expect(writerOf('9d1c.duckdb')).toBeUndefined();
    expect(writerOf('current')).toBeUndefined();
    expect(writerOf('cli-12-x.duckdb.wal')).toBeUndefined();
  });

  it('removes what dead writers left, with their companions, and nothing of live ones', () => {
    const names = [
      'current',
      `cli-${DEAD}-2026-11-26T00-00-00-000Z.duckdb`,
      `cli-${DEAD}-2026-11-26T00-00-00-000Z.duckdb.wal`,
      `cli-${DEAD}-2026-11-26T00-00-00-000Z.duckdb.tmp`,
      `cli-${LIVE}-2026-11-26T00-00-01-000Z.duckdb`,
      `cli-${LIVE}-2026-11-26T00-00-01-000Z.duckdb.wal`,
      `b1.duckdb.${DEAD}.part`,
      `b2.duckdb.${LIVE}.part`,
      `current.${DEAD}.tmp`,
      `current.${LIVE}.tmp`,
      // A server build without a pid: the server's to judge, never this rule's.
      'b3.duckdb',
      'b3.duckdb.wal',
      // Companions of a database file that is gone.
      'b4.duckdb.wal',
      'b5.duckdb.tmp',
      'notes.txt',
    ];
    expect(leftovers(names, alive).sort()).toEqual(
      [
        `cli-${DEAD}-2026-11-26T00-00-00-000Z.duckdb`,
        `cli-${DEAD}-2026-11-26T00-00-00-000Z.duckdb.wal`,
        `cli-${DEAD}-2026-11-26T00-00-00-000Z.duckdb.tmp`,
        `b1.duckdb.${DEAD}.part`,
        `current.${DEAD}.tmp`,
        'b4.duckdb.wal',
        'b5.duckdb.tmp',
      ].sort(),
    );
  });

  it('never removes the file kept (the current environment) nor its companions', () => {
    const kept = `cli-${DEAD}-2026-11-26T00-00-00-000Z.duckdb`;
    expect(leftovers([kept, `${kept}.wal`], alive, kept)).toEqual([]);
  });

  it('tells a live process from a dead one', () => {
    expect(processAlive(process.pid)).toBe(true);
    // A process that has exited and been reaped: its id is free (reuse within this test is unlikely).
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    expect(processAlive(Number(child.stdout.toString()))).toBe(false);
    expect(processAlive(0)).toBe(false);
    expect(processAlive(-1)).toBe(false);
  });
});
