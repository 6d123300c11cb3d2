import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './support/server';

// `npm run bench`'s own parts that decide what it reports (medians, when a round is redone, the bars, the
// results file, its command line), checked without measuring anything, and the commands
// docs/performance.md gives for it. Here and not beside the code: the unit project runs only src/**/*.spec.ts,
// and the bench is plain JavaScript under bench/. Needs no build and no services.

interface Rounds {
  median(values: number[]): number;
  spread(values: number[]): number;
  ratio(a: number, b: number): number;
  medianRatio<R>(rounds: R[], numerator: (r: R) => number, denominator: (r: R) => number): number;
  needsRedo(
    floors: number[],
    limits: { rounds: number; tolerance: number; redos: number; maxRedos: number },
  ): boolean;
  inRounds<R>(options: {
    rounds: number;
    tolerance?: number;
    maxRedos?: number;
    floor: (result: R) => number;
    round: (index: number) => Promise<R>;
  }): Promise<{ kept: R[]; redos: number; spread: number }>;
}
interface Cli {
  parseCli(
    argv: string[],
    env: Record<string, string | undefined>,
  ): {
    help: boolean;
    phases: string[];
    formats: string[];
    seconds: number;
    rounds: number;
    ordersRows: number;
    out: string | undefined;
    from: string[] | undefined;
    nodes: string[] | undefined;
    partial: boolean;
  };
  UsageError: new (message: string) => Error;
  USAGE: string;
  PHASES: { name: string }[];
}
interface Report {
  renderResults(results: unknown): string;
  renderRuns(runs: unknown[]): string;
  bars(results: unknown): { check: string; measured: string; pass: boolean | null }[];
}

const bench = (file: string) => join(REPO_ROOT, 'bench', file);
const rounds = jest.requireActual<Rounds>(bench('lib/rounds.js'));
const cli = jest.requireActual<Cli>(bench('lib/cli.js'));
const report = jest.requireActual<Report>(bench('lib/report.js'));
const { accepts } = jest.requireActual<{
  accepts(header: string | undefined, encoding: string): boolean;
}>(bench('lib/encoding.js'));
const { dashboardSelection } = jest.requireActual<{ dashboardSelection(i: number): string }>(
  bench('lib/dashboard.js'),
);

describe('bench rounds', () => {
  it('takes the median, of an even count the mean of the middle two, ignoring missing figures', () => {
    expect(rounds.median([5, 1, 3])).toBe(3);
    expect(rounds.median([4, 1, 3, 2])).toBe(2.5);
    expect(rounds.median([NaN, 7, 1, 4])).toBe(4);
    expect(rounds.median([])).toBeNaN();
  });

  it('measures how far a floor moved as (max - min) / median', () => {
    expect(rounds.spread([100, 105, 110])).toBeCloseTo(0.1 / 1.05);
    expect(rounds.spread([100])).toBe(0);
    expect(rounds.ratio(45, 100)).toBeCloseTo(0.45);
    expect(rounds.ratio(1, 0)).toBeNaN();
  });

  it("takes a ratio as the median of the rounds' own ratios, not the ratio of two medians", () => {
    // Drey's fast round paired with its floor's fast round: 0.5 each time, though the medians give 0.4.
    const kept = [
      { drey: 50, floor: 100 },
      { drey: 40, floor: 80 },
      { drey: 200, floor: 400 },
    ];
    expect(
      rounds.medianRatio(
        kept,
        (round) => round.drey,
        (round) => round.floor,
      ),
    ).toBeCloseTo(0.5);
    expect(rounds.median(kept.map((r) => r.drey)) / rounds.median(kept.map((r) => r.floor))).toBe(
      0.5,
    );
  });

  it('redoes a round when the floor of the last rounds moved by more than 10%, within the redos allowed', () => {
    const limits = { rounds: 3, tolerance: 0.1, redos: 0, maxRedos: 2 };
    expect(rounds.needsRedo([100, 104, 109], limits)).toBe(false);
    expect(rounds.needsRedo([100, 104, 112], limits)).toBe(true);
    // Only the last `rounds` count: an early outlier redone away stops the redos.
    expect(rounds.needsRedo([60, 100, 104, 109], { ...limits, redos: 1 })).toBe(false);
    expect(rounds.needsRedo([100, 150, 100], { ...limits, redos: 2 })).toBe(false);
    expect(rounds.needsRedo([100, 150], limits)).toBe(false);
  });

  it('runs the rounds, then redoes while the floor moved, keeping the last rounds', async () => {
    const floors = [100, 150, 100, 101, 99, 100];
    const ran: number[] = [];
    const result = await rounds.inRounds({
      rounds: 3,
      floor: (round: { floor: number }) => round.floor,
      round: (index) => {
        ran.push(index);
        return Promise.resolve({ floor: floors[index] });
      },
    });
    // Rounds 0-2 spread 50%; redo 1 gives 150, 100, 101 (still 49%); redo 2 gives 100, 101, 99.
    expect(ran).toEqual([0, 1, 2, 3, 4]);
    expect(result.redos).toBe(2);
    expect(result.kept.map((round) => round.floor)).toEqual([100, 101, 99]);
    expect(result.spread).toBeCloseTo(0.02);
  });

  it('stops redoing after maxRedos even when the floor keeps moving', async () => {
    let index = 0;
    const result = await rounds.inRounds({
      rounds: 2,
      maxRedos: 1,
      floor: (value: number) => value,
      round: () => Promise.resolve((index++ % 2) * 100 + 100),
    });
    expect(index).toBe(3);
    expect(result.redos).toBe(1);
    expect(result.spread).toBeGreaterThan(0.1);
  });
});

describe('bench command line', () => {
  it('runs every phase into bench/results.md by default, 3 rounds of 5 s, on 1,000,000 orders', () => {
    const options = cli.parseCli([], {});
    expect(options.phases).toEqual(cli.PHASES.map((phase) => phase.name));
    expect(options).toMatchObject({ seconds: 5, rounds: 3, ordersRows: 1_000_000 });
    expect(options.out).toBe('bench/results.md');
    expect(options.partial).toBe(false);
  });

  it('runs the phases --only names, writing no file unless --out names one', () => {
    const options = cli.parseCli(['--only', 'exports,cached', '--seconds', '2'], {
      BENCH_ROUNDS: '1',
    });
    expect(options.phases).toEqual(['exports', 'cached']);
    expect(options).toMatchObject({ seconds: 2, rounds: 1, partial: true, out: undefined });
    expect(cli.parseCli(['--formats', 'csv', '--out', 'x.md'], {}).out).toBe('x.md');
  });

  it('runs the whole bench once per Node binary --nodes names, and renders several kept runs', () => {
    const options = cli.parseCli(['--nodes', '/usr/bin/node,/opt/node26/bin/node'], {});
    expect(options).toMatchObject({
      nodes: ['/usr/bin/node', '/opt/node26/bin/node'],
      out: 'bench/results.md',
    });
    expect(cli.parseCli(['--from', 'a.json,b.json'], {})).toMatchObject({
      from: ['a.json', 'b.json'],
      out: undefined,
    });
  });

  it('refuses an unknown phase, format or option, and a duration out of range', () => {
    expect(() => cli.parseCli(['--only', 'exports,nope'], {})).toThrow(/unknown phase "nope"/);
    expect(() => cli.parseCli(['--formats', 'pdf'], {})).toThrow(/unknown format/);
    expect(() => cli.parseCli(['--fast'], {})).toThrow(cli.UsageError);
    expect(() => cli.parseCli([], { BENCH_SECONDS: '0' })).toThrow(/seconds must be/);
  });
});

describe('bench results file', () => {
  const served = {
    format: 'csv',
    served: true,
    floor: 'csv',
    floorName: 'COPY (FORMAT csv)',
    rows: 1_000_000,
    counted: 'lines',
    megabytes: 58.4,
    rowsPerSecond: 700_000,
    seconds: 1.43,
    peakMb: 250,
    beforeMb: 190,
    failedRounds: 0,
    floorRows: 1_000_000,
    floorRowsPerSecond: 1_000_000,
    floorPeakMb: 150,
    redos: 1,
    spread: 0.04,
    ratio: 0.7,
  };
  const figures = (rps: number, share: number, p99: number) => ({
    rps,
    share,
    p50: 1,
    p99,
    non2xx: 0,
  });
  const results = {
    phases: ['exports', 'cached', 'tail', 'uncached', 'dashboard'],
    partial: false,
    seconds: 5,
    rounds: 3,
    ordersRows: 1_000_000,
    connections: 10,
    serverCpu: 0,
    loadCpu: 1,
    machine: { nproc: 2, cpu: 'Test CPU', memoryGb: 8, node: 'v20', duckdb: '1.5', os: 'Linux' },
    loadBefore: '1.00 1.00 1.00',
    loadAfter: '2.00 1.50 1.00',
    minutes: 6.5,
    finishedAt: '2026-11-26T08:00:00.000Z',
    exports: [
      served,
      { format: 'parquet', floor: 'parquet', floorName: 'COPY (FORMAT parquet)', served: false },
      {
        ...served,
        format: 'xlsx',
        floor: null,
        floorName: '—',
        rowsPerSecond: 250_000,
        ratio: NaN,
      },
    ],
    cached: {
      figures: {
        http: figures(10_000, 1, 2),
        express: figures(4000, 0.4, 8),
        nest: figures(3500, 0.35, 9),
        drey: figures(5000, 0.52, 4),
        httpCompressed: figures(12_000, 1, 2),
        expressCompressed: figures(4000, 0.33, 8),
        dreyCompressed: figures(4000, 0.33, 6),
      },
      plainBytes: 14393,
      compressedBytes: 1855,
      encoding: 'br',
      dreyEncoding: 'br',
      redos: 0,
      spread: 0.05,
    },
    tail: {
      format: 'csv',
      quiet: { rps: 5000, p50: 1, p99: 4 },
      loaded: { rps: 3000, p50: 2, p99: 9 },
      p99Ratio: 2.1,
      non2xx: 0,
      redos: 0,
      spread: 0.03,
    },
    uncached: {
      direct: { rps: 20, mean: 450, p50: 450, p99: 900, failed: 0 },
      drey: { rps: 19, mean: 480, p50: 490, p99: 950, failed: 0 },
      times: { p50: 1.08, mean: 1.06, rps: 0.95 },
      redos: 0,
      spread: 0.05,
    },
    unmeasured: [{ phase: 'dashboard', message: 'the PNG dashboard answered 503: no Chromium' }],
  };

  it('judges each bar against its floor from the same run, and says what was not served', () => {
    const byCheck = Object.fromEntries(report.bars(results).map((bar) => [bar.check, bar]));
    expect(byCheck['export csv ≥ 65% of COPY (FORMAT csv) rows/s']).toMatchObject({
      measured: '70% (medians 700,000 and 1,000,000)',
      pass: true,
    });
    expect(byCheck['export parquet: rows/s and peak RSS']).toMatchObject({
      measured: 'not served (406)',
      pass: null,
    });
    expect(byCheck['export xlsx ≥ 300,000 rows/s']).toMatchObject({ pass: false });
    expect(byCheck['cached read (plain) ≥ 45% of node:http req/s']).toMatchObject({
      measured: '52% (medians 5,000 and 10,000)',
      pass: true,
    });
    expect(byCheck['cached read (gzip, br) p99 ≤ 5 ms'].pass).toBe(false);
    expect(byCheck['cached read p99 during an export ≤ 2× without']).toMatchObject({ pass: false });
    expect(byCheck['uncached query p50 ≤ 1.10× direct DuckDB']).toMatchObject({
      measured: expect.stringContaining('1.08×') as string,
      pass: true,
    });
  });

  it('renders the figures a run kept with --from, measuring nothing, into the file --out names', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-from-'));
    try {
      const figures = join(dir, 'figures.json');
      // As a run keeps them: JSON, where a figure not measured (NaN) becomes null.
      writeFileSync(figures, JSON.stringify({ ...results, exports: [{ ...served, ratio: NaN }] }));
      const out = join(dir, 'results.md');
      const ran = spawnSync(process.execPath, [bench('run.js'), '--from', figures, '--out', out], {
        encoding: 'utf8',
        timeout: 30000,
      });
      expect(ran.stderr).toBe('');
      expect(ran.status).toBe(0);
      const written = readFileSync(out, 'utf8');
      expect(written).toContain('## Exports: 1,000,000 rows of orders_detail');
      expect(written).toMatch(/\| export csv ≥ 65% of COPY \(FORMAT csv\) rows\/s +\| - \(medians/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("renders the start's steps from the server's log lines, and judges the 10 s bar", () => {
    const startup = {
      seconds: 11.5,
      steps: [
        { step: 'loading the application', atMs: 200 },
        { step: 'opening the database', atMs: 1400 },
      ],
    };
    const text = report.renderResults({ ...results, startup });
    expect(text).toContain('## Start-up (examples/expenses, a new database)');
    expect(text).toMatch(/^\| opening the database +\| 1,400 +\| 1,200 +\|$/m);
    const bar = report.bars({ ...results, startup }).find((b) => b.check.startsWith('first start'));
    expect(bar).toMatchObject({ measured: '11.5 s', pass: false });
  });

  it('renders runs on two Node lines side by side: each bar per line, then each run a level down', () => {
    const older = { ...results, machine: { ...results.machine, node: 'v20.20.2' } };
    const newer = { ...results, machine: { ...results.machine, node: 'v26.12.1' } };
    const text = report.renderRuns([older, newer]);
    expect(text).toMatch(/^# Benchmark results\n/);
    expect(text).toMatch(/^\| Bar +\| Node v20\.20\.2 +\| Node v26\.12\.1 +\|$/m);
    expect(text).toMatch(/^\| uncached query p50 ≤ 1\.10× direct DuckDB +\| 1\.08× .+\| 1\.08× /m);
    expect(text).toContain('\n## Node v20.20.2\n');
    expect(text).toContain('\n### Exports: 1,000,000 rows of orders_detail\n');
    expect(text.match(/^## Node /gm)).toHaveLength(2);
  });

  it('renders the machine, the load before and after, each section and what could not be measured', () => {
    const text = report.renderResults(results);
    expect(text).toContain('Machine: 2 CPUs (Test CPU), 8 GB');
    expect(text).toContain(
      'Load average before and after the run: 1.00 1.00 1.00 and 2.00 1.50 1.00',
    );
    expect(text).toContain('## Exports: 1,000,000 rows of orders_detail');
    expect(text).toContain('| parquet | not served (406) |');
    expect(text).toContain('floor moved 4% over the rounds kept, 1 redone');
    expect(text).toContain('| Drey, `gzip, br` | 4,000 | 1.00 | 6.00 | 33% |');
    expect(text).toContain('## Not measured: dashboard\n\nthe PNG dashboard answered 503');
    expect(text).toMatch(/\| .*p99 ≤ 5 ms \| 6\.00 ms \| \*\*missed\*\* \|/);
    expect(text).not.toContain('## PNG dashboard');
  });
});

describe('bench helpers', () => {
  it('reads Accept-Encoding as the floors need: a named encoding with a quality above zero', () => {
    expect(accepts('gzip, br', 'br')).toBe(true);
    expect(accepts('gzip;q=1.0, br;q=0', 'br')).toBe(false);
    expect(accepts(undefined, 'gzip')).toBe(false);
    expect(accepts('deflate', 'gzip')).toBe(false);
  });

  it('gives the dashboard phase a new selection each time', () => {
    const selections = Array.from({ length: 300 }, (_, i) => dashboardSelection(i));
    expect(new Set(selections).size).toBe(300);
  });
});

describe('rows of a downloaded export, counted after the timing', () => {
  const { countRows } = jest.requireActual<{
    countRows(format: string, file: string): Promise<{ rows: number; counted: string }>;
  }>(bench('lib/exports.js'));
  const resolvable = (name: string) => {
    try {
      require.resolve(name);
      return true;
    } catch {
      return false;
    }
  };
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'bench-count-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a Parquet file back with DuckDB', async () => {
    const { DuckDBInstance } =
      jest.requireActual<typeof import('@duckdb/node-api')>('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const file = join(dir, 'rows.parquet');
    await connection.run(`COPY (SELECT * FROM range(12345)) TO '${file}' (FORMAT parquet)`);
    connection.closeSync();
    instance.closeSync();
    await expect(countRows('parquet', file)).resolves.toMatchObject({ rows: 12345 });
  });

  // apache-arrow comes with the Arrow export, yazl and yauzl with it and with Chromium's download helper;
  // without them the rows are said to be uncounted, which is checked instead.
  it('reads an Arrow IPC stream back with apache-arrow, or says it cannot', async () => {
    const file = join(dir, 'rows.arrow');
    if (!resolvable('apache-arrow')) {
      writeFileSync(file, '');
      await expect(countRows('arrow', file)).resolves.toMatchObject({ rows: NaN });
      return;
    }
    // Typed here as far as used: the package comes with the Arrow export, not with this spec.
    const arrow = jest.requireActual<{
      tableFromArrays(columns: Record<string, Int32Array>): unknown;
      tableToIPC(table: unknown, format: 'stream'): Uint8Array;
    }>('apache-arrow');
    const table = arrow.tableFromArrays({ a: Int32Array.from({ length: 5000 }, (_, i) => i) });
    writeFileSync(file, arrow.tableToIPC(table, 'stream'));
    await expect(countRows('arrow', file)).resolves.toMatchObject({ rows: 5000 });
  });

  (resolvable('yazl') ? it : it.skip)(
    "counts an Excel file's rows, less the header, across the unzipped stream's chunks",
    async () => {
      const yazl = jest.requireActual<{
        ZipFile: new () => {
          addBuffer(buffer: Buffer, name: string): void;
          end(): void;
          outputStream: NodeJS.ReadableStream;
        };
      }>('yazl');
      const zip = new yazl.ZipFile();
      let xml = '<?xml version="1.0"?><worksheet><sheetData><row r="1"><c/></row>';
      for (let i = 2; i <= 70001; i++) xml += `<row r="${i}"><c t="n"><v>${i}</v></c></row>`;
      zip.addBuffer(Buffer.from(`${xml}</sheetData></worksheet>`), 'xl/worksheets/sheet1.xml');
      zip.addBuffer(Buffer.from('<Types/>'), '[Content_Types].xml');
      zip.end();
      const file = join(dir, 'rows.xlsx');
      await new Promise<void>((done) =>
        zip.outputStream.pipe(createWriteStream(file)).once('close', () => done()),
      );
      const expected = resolvable('yauzl') ? 70000 : NaN;
      await expect(countRows('xlsx', file)).resolves.toMatchObject({ rows: expected });
    },
  );
});

describe('docs/performance.md on npm run bench', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [bench('run.js'), ...args], { encoding: 'utf8', timeout: 30000 });

  it('--help prints the usage, and every option and phase the page names is in it', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout.trim()).toBe(cli.USAGE);
    const page = readFileSync(join(REPO_ROOT, 'docs', 'performance.md'), 'utf8');
    const section = page.slice(page.indexOf('## `npm run bench`'));
    const options = [...section.matchAll(/`npm run bench -- ([^`]+)`/g)].map((match) => match[1]);
    expect(options.length).toBeGreaterThan(2);
    for (const command of options) {
      const args = command.split(/\s+/);
      for (const option of args.filter((arg) => arg.startsWith('--'))) {
        expect(cli.USAGE).toContain(`${option} `);
      }
      // Each command the page gives parses as the bench reads it.
      expect(() => cli.parseCli(args, {})).not.toThrow();
    }
    for (const phase of cli.PHASES) expect(section).toContain(`\`${phase.name}\``);
  });

  it('a wrong option exits 2 with the usage, before measuring anything', () => {
    const wrong = run(['--only', 'everything']);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('unknown phase "everything"');
    expect(wrong.stderr).toContain('--only <phases>');
  });
});

// The one part here that needs the services: a database of its own on the tests' Postgres, a key on Redis.
describe('node bench/token-lookup-cost.js (docs/performance.md)', () => {
  it('measures the Postgres lookup against the Redis GET that replaces it, one line per round', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'performance.md'), 'utf8');
    expect(page).toContain('`node bench/token-lookup-cost.js`');
    // As the page gives it, with fewer calls (the defaults are 5,000 calls, 3 rounds).
    const run = spawnSync(process.execPath, [bench('token-lookup-cost.js'), '300', '2'], {
      encoding: 'utf8',
      timeout: 60000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const rounds = run.stdout.trim().split('\n');
    expect(rounds).toHaveLength(2);
    for (const line of rounds) {
      expect(line).toMatch(
        /^round \d: Postgres lookup \d+\.\d µs of CPU a call, Redis GET \d+\.\d µs \(\d+\.\d\dx\)$/,
      );
    }
  });
});
