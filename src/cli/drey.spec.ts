import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '@/cli/drey';

const EXAMPLE = join(__dirname, '..', '..', 'examples', 'expenses');
const BENCH = join(__dirname, '..', '..', 'bench', 'project');

/** The line of `text` in a dashboard template of the example. */
function dashboardLine(example: string, text: string): number {
  const source = readFileSync(join(example, 'dashboards', 'expenses_dashboard.html'), 'utf8');
  return source.slice(0, source.indexOf(text)).split('\n').length;
}

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

  it('explains its usage on a bad command line: the general one for an unknown command', async () => {
    const result = await run(['compil']);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^unknown command "compil"\n\nUsage: npm run drey -- <command>/);
  });

  it('prints its version for --version and `version`', async () => {
    const { version } = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'),
    ) as { version: string };
    for (const argv of [['--version'], ['version']]) {
      expect(await run(argv)).toEqual({ code: 0, out: `drey ${version}`, err: '' });
    }
    expect(await run(['version', 'x'])).toMatchObject({ code: 2 });
  });

  it('answers --help for the tool and for each command, with exit code 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const result = await run(argv);
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out).toMatch(/^Usage: npm run drey -- <command>/);
      expect(result.out).toContain('Exit codes: 0 done, 1 a problem');
    }
    const usages: [string[], RegExp][] = [
      [['run', '--help'], /^Usage: npm run drey -- run <dataset>/],
      [['help', 'run'], /^Usage: npm run drey -- run <dataset>/],
      [['run', 'x', '-h'], /^Usage: npm run drey -- run <dataset>/],
      [['validate', '--help'], /^Usage: npm run drey -- validate/],
      [['help', 'build'], /^Usage: npm run drey -- build/],
      [['compile', '--help'], /^Usage: npm run drey -- compile <dataset>/],
      [['dev', '--help'], /^Usage: npm run drey -- dev/],
      [['users', '--help'], /^Usage: npm run drey -- users <command>/],
      [['help', 'users'], /^Usage: npm run drey -- users <command>/],
      [['users', 'reset-password', '--help'], /^Usage: npm run drey -- users reset-password/],
      [['help', 'users', 'reset-password'], /^Usage: npm run drey -- users reset-password/],
    ];
    for (const [argv, usage] of usages) {
      const result = await run(argv);
      expect({ argv, ...result }).toMatchObject({ argv, code: 0, err: '' });
      expect(result.out).toMatch(usage);
    }
    expect((await run(['users', '--help'])).out).toContain('reset-password <name>');
    expect((await run(['users', 'reset-password', '--help'])).out).toContain('--password-stdin');
  });

  it("prints a usage error with that command's usage, not the general one, and exits 2", async () => {
    const cases: [string[], string, RegExp][] = [
      [['validate', '--format', 'csv'], 'validate takes no --format', /validate \[--project DIR\]/],
      [['run', 'x', '--nope'], "Unknown option '--nope'", /run <dataset>/],
      [['run', '--limit'], "Option '--limit <value>' argument missing", /run <dataset>/],
      [
        ['run', 'expenses_by_month', '--format', 'xml'],
        '--format must be table, csv or json, not "xml"',
        /run <dataset>/,
      ],
      [
        ['run', 'x', '--limit', 'many'],
        '--limit needs a whole number from 0 up, not "many"',
        /run <dataset>/,
      ],
      // Not Node's "argument is ambiguous": a negative number is the option's value, judged as such.
      [
        ['run', 'x', '--limit', '-1'],
        '--limit needs a whole number from 0 up, not "-1"',
        /run <dataset>/,
      ],
      [
        ['run', 'x', '--format', 'csv', '--csv-formulas', 'off'],
        '--csv-formulas must be escaped or raw, not "off"',
        /run <dataset>/,
      ],
      [
        ['users', 'list', '--csv-formulas', 'raw'],
        'users list takes no --csv-formulas',
        /users list/,
      ],
      [
        ['run', 'x', '--limit', '100001'],
        'a table shows at most 100000 rows (it aligns them in memory): --format csv or json prints any number',
        /run <dataset>/,
      ],
      [['run', 'x', '--param', 'nope'], '--param needs name=value, not "nope"', /run <dataset>/],
      [['run'], 'run needs a dataset name', /run <dataset>/],
      [['compile', 'a', 'b'], 'unexpected "b"', /compile <dataset>/],
      [
        ['run', 'x', '--user', 'bob'],
        "run takes no --user: run takes its caller from the service's database: --as NAME",
        /run <dataset>/,
      ],
      [['users'], 'users needs a command', /users <command>/],
      [['users', 'frob'], 'unknown users command "frob"', /users <command>/],
      [
        ['users', 'reset-password'],
        'users reset-password needs a user name',
        /reset-password <name>/,
      ],
    ];
    for (const [argv, message, usage] of cases) {
      const result = await run(argv);
      expect({ argv, code: result.code }).toEqual({ argv, code: 2 });
      const [first, blank, usageLine] = result.err.split('\n');
      expect({ argv, first, blank }).toEqual({ argv, first: message, blank: '' });
      expect(usageLine).toMatch(/^Usage: npm run drey -- /);
      expect(usageLine).toMatch(usage);
      expect(result.err).not.toContain('Commands:');
    }
  });

  it('lists the problems of the files and of the SQL in one run, grouped, and names what it left unchecked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-cli-both-'));
    cpSync(EXAMPLE, dir, { recursive: true });
    const edit = (file: string, from: string, to: string) => {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text).toContain(from);
      writeFileSync(join(dir, file), text.replace(from, to));
    };
    edit('project.yml', 'name: expenses', 'name: Expenses');
    // max_filter, which only expenses_by_month reads: that model cannot be rendered, so it is left out.
    edit(
      'project.yml',
      'widget: number\n    label: Amounts Less Than',
      'widget: nmber\n    label: Amounts Less Than',
    );
    edit('models/expense_transactions.sql', ', amount\n', ', e.amountt\n');
    edit('models/expenses_grouped.sql', 'SELECT {{', 'SELEC {{');
    const result = await run(['validate', '--project', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.err.split('\n').filter((line) => !line.startsWith('        '))).toEqual([
      'The project is invalid (4 problems):',
      '  in its files (2):',
      '    project.yml at name: must be a lowercase name (letters, digits, _ or -)',
      '    project.yml at parameters[8].widget: must be one of single_select, multi_select, date, date_range, number, number_range, text',
      '  in its SQL (2):',
      '    models/expense_transactions.sql at line 2, column 54: Binder Error: Referenced table "e" not found!',
      '    models/expenses_grouped.sql at line 4, column 1: Parser Error: syntax error at or near "SELEC"',
      '  SQL not checked because of the problems above: models/expenses_by_month.sql',
    ]);
  });

  it('leaves out of the SQL check a model whose own file has a problem, and what reads it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-cli-model-'));
    cpSync(EXAMPLE, dir, { recursive: true });
    // expense_transactions does not load; expenses_grouped reads it and cannot be planned without it.
    writeFileSync(join(dir, 'models', 'expense_transactions.yml'), 'kind: runtim\n');
    const sql = join(dir, 'models', 'expenses_by_month.sql');
    writeFileSync(sql, readFileSync(sql, 'utf8').replace('sum(amount)', 'sum(amout)'));
    const result = await run(['validate', '--project', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.err.split('\n').filter((line) => !line.startsWith('        '))).toEqual([
      'The project is invalid (4 problems):',
      '  in its files (3):',
      '    models/expense_transactions.yml at kind: must be one of build, runtime, dbview, source',
      `    models/expenses_grouped.sql at line 5: ref('expense_transactions'): no model named "expense_transactions"`,
      '    project.yml at datasets[2].model: no model named "expense_transactions"',
      '  in its SQL (1):',
      '    models/expenses_by_month.sql at line 1, column 19: Binder Error: Referenced column "amout" not found in FROM clause!',
      '  SQL not checked because of the problems above: models/expenses_grouped.sql',
    ]);
  });

  it("reports a build model's failure beside the files' problems", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-cli-build-'));
    cpSync(EXAMPLE, dir, { recursive: true });
    writeFileSync(
      join(dir, 'project.yml'),
      readFileSync(join(dir, 'project.yml'), 'utf8').replace(
        'major_version: 1',
        'major_version: x',
      ),
    );
    const sql = join(dir, 'models', 'expense_details.sql');
    writeFileSync(sql, readFileSync(sql, 'utf8').replace('e.description', 'e.descripton'));
    const result = await run(['validate', '--project', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    const lines = result.err.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'The project is invalid (2 problems):',
      '  in its files (1):',
      '    project.yml at major_version: must be a whole number from 0 up',
      '  in its SQL (1):',
    ]);
    expect(lines[4]).toMatch(/^ {4}the build: .*expense_details.*descripton/);
  });

  it('reports every problem in one run: a model .yml that does not parse leaves the others reported and its SQL named as unchecked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-cli-all-'));
    cpSync(EXAMPLE, dir, { recursive: true });
    const edit = (file: string, from: string, to: string) => {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text).toContain(from);
      writeFileSync(join(dir, file), text.replace(from, to));
    };
    writeFileSync(
      join(dir, 'models', 'expenses_by_month.yml'),
      'kind: runtime\ndescription: [oops\n',
    );
    edit(
      'project.yml',
      'dashboards:\n',
      'build:\n  schedule: "0 25 * * *"\n  timezone: Mars/Base\n\ndashboards:\n',
    );
    edit(
      'project.yml',
      '  - name: end_date\n    widget: date',
      '  - name: end_date\n    widgit: date',
    );
    edit('project.yml', "ref('categories')", "ref('categoriez')");
    edit(
      'dashboards/expenses_dashboard.html',
      "dataset('expenses_grouped'",
      "dataset('expenses_groupd'",
    );
    const result = await run(['validate', '--project', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.err.split('\n')).toEqual([
      'The project is invalid (7 problems):',
      '  project.yml at build.timezone: must be a time zone such as UTC or Europe/Paris, got "Mars/Base"',
      '  project.yml at build.schedule: is not a cron pattern: Constraint error, got value 25 expected range 0-23',
      '  models/expenses_by_month.yml at line 2, column 14: Flow sequence in block collection must be sufficiently indented and end with a ]',
      '  project.yml at parameters[3].widget: is required: one of single_select, multi_select, date, date_range, number, number_range, text',
      '  project.yml at parameters[3].widgit: is not a known key of a parameter; did you mean "widget"?',
      `  project.yml at parameters[5].options_from.sql: ref('categoriez'): no model named "categoriez"`,
      `  dashboards/expenses_dashboard.html at line ${dashboardLine(EXAMPLE, "dataset('expenses_grouped'")}: dataset('expenses_groupd'): no dataset named "expenses_groupd"`,
      '  SQL not checked because of the problems above: models/expenses_by_month.sql, models/expense_transactions.sql, models/expenses_grouped.sql',
    ]);
  });

  it("names a parameter's query that fails, with the query's line, and says the models' SQL waits for it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-cli-query-'));
    cpSync(EXAMPLE, dir, { recursive: true });
    const manifest = join(dir, 'project.yml');
    const text = readFileSync(manifest, 'utf8');
    expect(text).toContain('ORDER BY subcategory_id\n');
    writeFileSync(
      manifest,
      text.replace('ORDER BY subcategory_id\n', 'ORDER BY subcategory_idz\n'),
    );
    const result = await run(['validate', '--project', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    const lines = result.err.split('\n');
    expect(lines[0]).toBe('The project is invalid (1 problem):');
    expect(lines[1]).toMatch(
      /^ {2}project\.yml at parameters\[6\]\.options_from\.sql: Binder Error: Referenced column "subcategory_idz"/,
    );
    expect(result.err).toMatch(
      /\n {6}line 3 of the query: FROM "subcategories" ORDER BY subcategory_idz\n/,
    );
    expect(lines.at(-1)).toBe(
      "  The models' SQL was not checked: it is planned with the parameters' options, whose queries must run first",
    );
  });

  it('says when the SQL cannot be checked at all: project.yml does not read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-cli-yaml-'));
    cpSync(EXAMPLE, dir, { recursive: true });
    writeFileSync(join(dir, 'project.yml'), 'name: [unclosed\n');
    const result = await run(['validate', '--project', dir]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^The project is invalid \(1 problem\):\n {2}project\.yml/);
    expect(result.err).toMatch(/\n {2}SQL not checked: project\.yml must read first$/);
  });
});
