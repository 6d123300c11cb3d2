import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drey } from './support/drey-cli';
import { BENCH_PROJECT as BENCH } from './support/server';

/**
 * `drey run`, as a process: it reads through the results reader (src/datasets/datasets-reader.ts), whose
 * Nest decorators Jest's own loader cannot load in a unit spec.
 */
async function run(argv: string[], env: Record<string, string> = {}) {
  const ran = await drey(argv, env);
  const text = (printed: string) => printed.replace(/\n$/, '');
  return { code: ran.code, out: text(ran.stdout), err: text(ran.stderr) };
}

describe('drey run', () => {
  describe('run, on a project of more rows than a table shows', () => {
    let dataDir: string;
    const env = () => ({ PROJECT_DIR: BENCH, DATA_DIR: dataDir, ORDERS_ROWS: '5000' });

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'drey-cli-rows-'));
      expect((await run(['build'], env())).code).toBe(0);
    });
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('prints every row in csv and json (several chunks of the engine), or --limit of them', async () => {
      const csv = await run(['run', 'orders_detail', '--format', 'csv'], env());
      expect(csv).toMatchObject({ code: 0, err: '' });
      const lines = csv.out.split('\n');
      expect(lines).toHaveLength(5001);
      expect(new Set(lines.slice(1)).size).toBe(5000);

      const json = await run(['run', 'orders_detail', '--format', 'json'], env());
      expect(json).toMatchObject({ code: 0, err: '' });
      const rows = JSON.parse(json.out) as Record<string, unknown>[];
      expect(rows).toHaveLength(5000);
      expect(Object.keys(rows[0]).join(',')).toBe(lines[0]);

      const limited = await run(
        ['run', 'orders_detail', '--format', 'csv', '--limit', '2100'],
        env(),
      );
      expect(limited.out.split('\n')).toEqual(lines.slice(0, 2101));
      const some = await run(['run', 'orders_detail', '--format', 'json', '--limit', '3'], env());
      expect(JSON.parse(some.out)).toEqual(rows.slice(0, 3));
    });

    it('prints no row for --limit 0: a CSV header, an empty JSON array', async () => {
      const empty = await run(['run', 'orders_detail', '--format', 'json', '--limit', '0'], env());
      expect(empty).toEqual({ code: 0, out: '[]', err: '' });
      const header = await run(['run', 'orders_detail', '--format', 'csv', '--limit', '0'], env());
      expect(header).toMatchObject({ code: 0, err: '' });
      expect(header.out.split('\n')).toEqual([expect.stringMatching(/^[a-z_]+(,[a-z_]+)+$/)]);
    });

    it('shows 100 rows in a table and says how many it left out and how to see them', async () => {
      const table = await run(['run', 'orders_detail'], env());
      expect(table).toMatchObject({ code: 0, err: '' });
      const lines = table.out.split('\n');
      expect(lines).toHaveLength(2 + 100 + 1);
      expect(lines.at(-1)).toBe(
        '(the first 100 of 5000 rows, 4900 left out: --limit 5000 shows them all, --format csv or json prints every row)',
      );
      const all = await run(['run', 'orders_detail', '--limit', '5000'], env());
      expect(all.out.split('\n')).toHaveLength(2 + 5000 + 1);
      expect(all.out.split('\n').at(-1)).toBe('(5000 rows)');
    });
  });

  describe('run, on a built environment', () => {
    let dataDir: string;
    const runRows = (...argv: string[]) => run(['run', ...argv], { DATA_DIR: dataDir });

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'drey-cli-run-'));
      expect((await run(['build'], { DATA_DIR: dataDir })).code).toBe(0);
    });
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('prints rows as an aligned table, CSV or JSON, with the selections given', async () => {
      const table = await runRows(
        'expenses_by_month',
        '--param',
        'start_date=2024-01-01',
        '--limit',
        '3',
      );
      expect(table.code).toBe(0);
      const lines = table.out.split('\n');
      expect(lines[1]).toMatch(/^-+( +-+)+$/);
      expect(lines).toHaveLength(6);
      expect(lines[5]).toBe(
        '(the first 3 of 12 rows, 9 left out: --limit 12 shows them all, --format csv or json prints every row)',
      );

      const csv = await runRows('expenses_by_month', '--format', 'csv', '--limit', '2');
      expect(csv.out.split('\n')).toHaveLength(3);
      const header = csv.out.split('\n')[0].split(',');
      expect(lines[0].split(/ +/)).toEqual(header);

      const json = await runRows('expenses_by_month', '--format=json', '--limit', '2');
      const rows = JSON.parse(json.out) as Record<string, unknown>[];
      expect(rows).toHaveLength(2);
      expect(Object.keys(rows[0])).toEqual(header);
    });

    it('refuses a bad selection as the service does, and an unknown dataset', async () => {
      const bad = await runRows('expenses_by_month', '--param', 'start_date=yesterday');
      expect(bad.code).toBe(1);
      expect(bad.err).toContain('start_date');
      expect((await runRows('nope')).err).toMatch(/^no dataset named "nope"/);
    });

    it('runs as an anonymous caller: a protected or private dataset is refused, naming --as', async () => {
      expect(await runRows('expenses_grouped')).toEqual({
        code: 1,
        out: '',
        err: 'the dataset "expenses_grouped" is protected: an anonymous caller may not run it (run it --as NAME, any user)',
      });
      expect((await runRows('expense_transactions', '--format', 'csv')).err).toBe(
        'the dataset "expense_transactions" is private: an anonymous caller may not run it (run it --as NAME, an administrator)',
      );
    });
  });
});
