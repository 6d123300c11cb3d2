import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '@/cli/drey';

const EXAMPLE = join(__dirname, '..', '..', 'examples', 'expenses');
const BENCH = join(__dirname, '..', '..', 'bench', 'project');

async function run(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    { PROJECT_DIR: EXAMPLE, ...env },
    {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
    },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('drey CLI', () => {
  it('validates the example project', async () => {
    const result = await run(['validate']);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain('7 models (3 seed, 1 build, 3 runtime)');
    expect(result.out).toContain('11 parameters, 3 datasets, 2 dashboards, 0 connections');
  });

  it('lists every problem of an invalid project, without a stack', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-cli-'));
    writeFileSync(join(dir, 'project.yml'), 'name: Bad\nmajor_version: x\n');
    const result = await run(['validate', '--project', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.err).toBe(
      'The project is invalid (2 problems):\n' +
        '  project.yml at name: must be a lowercase name (letters, digits, _ or -)\n' +
        '  project.yml at major_version: must be a whole number from 0 up',
    );
  });

  it('plans the SQL of every model: each mistake with its file, line and column, all at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-cli-sql-'));
    cpSync(EXAMPLE, dir, { recursive: true });
    const edit = (file: string, from: string, to: string) =>
      writeFileSync(join(dir, file), readFileSync(join(dir, file), 'utf8').replace(from, to));
    edit('models/expense_transactions.sql', ', amount\n', ', e.amountt\n');
    edit('models/expenses_by_month.sql', 'sum(amount)', 'sum(amout)');
    edit('models/expenses_grouped.sql', 'SELECT {{', 'SELEC {{');
    const result = await run(['validate', '--project', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.err.split('\n').filter((line) => line.startsWith('  models/'))).toEqual([
      '  models/expense_transactions.sql at line 2, column 54: Binder Error: Referenced table "e" not found!',
      '  models/expenses_by_month.sql at line 1, column 19: Binder Error: Referenced column "amout" not found in FROM clause!',
      '  models/expenses_grouped.sql at line 4, column 1: Parser Error: syntax error at or near "SELEC"',
    ]);
    expect(result.err).not.toMatch(/\n\s+at /);
  });

  describe('compile, on a built environment', () => {
    let dataDir: string;
    const compile = (dataset: string, ...params: string[]) =>
      run(['compile', dataset, ...params.flatMap((param) => ['--param', param])], {
        DATA_DIR: dataDir,
      });

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'drey-cli-compile-'));
      expect((await run(['build'], { DATA_DIR: dataDir })).code).toBe(0);
    });
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('compiles a dataset: placeholders in the SQL, bound values listed apart', async () => {
      const result = await compile(
        'expenses_by_month',
        'start_date=2024-01-01',
        'end_date=2024-06-30',
        'min_filter=0',
        'max_filter=300',
      );
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out).toContain('WHERE date BETWEEN $1 AND $2');
      expect(result.out).toContain(
        "-- bound values\n$1 = '2024-01-01' (date)\n$2 = '2024-06-30' (date)\n$3 = 0 (decimal)\n$4 = 300 (decimal)",
      );
    });

    it('compiles runtime models composed over one another, with option fields as SQL', async () => {
      const result = await compile(
        'expenses_grouped',
        'group_by=subcat',
        'date_range=2024-01-01..2024-03-31',
        'category=0,3',
        'subcategory=',
        'between_filter=0..300',
        "description_filter='; DROP TABLE x; --",
      );
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out).toContain('-- model expense_transactions (runtime)');
      expect(result.out).toContain('-- model expenses_grouped (runtime)');
      expect(result.out).toContain('SELECT category, subcategory, sum(amount) AS total_amount');
      expect(result.out).toContain('CAST(category_id AS VARCHAR) IN ($3, $4)');
      expect(result.out).toContain('WITH "expense_transactions" AS (');
      expect(result.out).toContain("'''; DROP TABLE x; --' (text)");
      expect(result.out).not.toMatch(/^[^$]*DROP TABLE/m);
    });

    it('validates and completes selections as the service does: defaults and bounds', async () => {
      const defaults = await compile('expenses_by_month', 'start_date=2024-01-01');
      expect(defaults).toMatchObject({ code: 0, err: '' });
      expect(defaults.out).toContain("$1 = '2024-01-01' (date)");
      expect(defaults.out).toContain('$4 = 300 (decimal)');
      const outOfBounds = await compile('expenses_by_month', 'max_filter=900');
      expect(outOfBounds.code).toBe(1);
      expect(outOfBounds.err).toMatch(/max_filter/);
      const unknown = await compile('expenses_by_month', 'nope=1');
      expect(unknown.code).toBe(1);
      expect(unknown.err).toBe(
        'not a parameter of this dataset: nope (it takes: start_date, end_date, min_filter, max_filter)',
      );
    });
  });

  it('asks for a build before compiling when parameters read the built tables', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'drey-cli-empty-'));
    const result = await run(['compile', 'expenses_by_month'], { DATA_DIR: dataDir });
    rmSync(dataDir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/run `npm run drey -- build` first$/);
  });

  it('builds the environment under DATA_DIR', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'drey-cli-data-'));
    const result = await run(['build'], { DATA_DIR: dataDir });
    const files = readdirSync(join(dataDir, 'environments'));
    rmSync(dataDir, { recursive: true, force: true });
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain('[2/4] seed expenses: 1000 rows in');
    expect(result.out).toContain('[4/4] build expense_details: 1000 rows in');
    expect(files.filter((file) => file.endsWith('.duckdb'))).toHaveLength(1);
    expect(files).toContain('current');
  });

  it("builds the benchmark's project with the size ORDERS_ROWS gives", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'drey-cli-bench-'));
    const result = await run(['build'], {
      PROJECT_DIR: BENCH,
      DATA_DIR: dataDir,
      ORDERS_ROWS: '500',
    });
    rmSync(dataDir, { recursive: true, force: true });
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain('[1/1] build orders: 500 rows in');
  });

  it('draws a progress bar on a terminal while it builds, then lists each model', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'drey-cli-bar-'));
    const out: string[] = [];
    const bar: string[] = [];
    const code = await main(
      ['build'],
      { PROJECT_DIR: EXAMPLE, DATA_DIR: dataDir },
      {
        out: (line) => out.push(line),
        err: () => undefined,
        status: (line) => bar.push(line),
      },
    );
    rmSync(dataDir, { recursive: true, force: true });
    expect(code).toBe(0);
    expect(bar[0]).toMatch(/^\[-{24}\] 0\/4 {2}seed categories {2}\d+\.\d s$/);
    expect(bar).toContain(
      bar.find((line) => /^\[#{24}\] 4\/4 {2}build expense_details/.test(line)),
    );
    expect(bar.at(-1)).toBe('');
    expect(out[0]).toMatch(/^ {2}seed categories: 5 rows in \d+ ms$/);
    expect(out.at(-1)).toMatch(/^Built .* it is now the current environment\.$/);
  });

  it('explains its usage on a bad command line', async () => {
    const result = await run(['compil']);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^unknown command "compil"\n\nUsage: npm run drey/);
  });

  it('answers --help for the tool and for each command, with exit code 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const result = await run(argv);
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out).toMatch(/^Usage: npm run drey -- <command>/);
      expect(result.out).toContain('Exit codes: 0 done, 1 a problem');
    }
    for (const argv of [
      ['run', '--help'],
      ['help', 'run'],
      ['run', 'x', '-h'],
    ]) {
      const result = await run(argv);
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out).toMatch(/^Usage: npm run drey -- run <dataset>/);
    }
    expect((await run(['users', 'reset-password', '--help'])).out).toContain('--password-stdin');
  });

  it('refuses options a command does not take, and bad values, with exit code 2', async () => {
    expect(await run(['validate', '--format', 'csv'])).toMatchObject({ code: 2 });
    expect((await run(['validate', '--format', 'csv'])).err).toMatch(/^validate takes no --format/);
    expect((await run(['run', 'expenses_by_month', '--format', 'xml'])).err).toMatch(
      /^--format must be table, csv or json/,
    );
    expect((await run(['run'])).err).toMatch(/^run needs a dataset name/);
    expect((await run(['compile', 'a', 'b'])).err).toMatch(/^unexpected "b"/);
    expect((await run(['users'])).code).toBe(2);
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
  });
});
