import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DataType, tableFromIPC } from 'apache-arrow';
import { decimalText } from './support/arrow-decimal';
import { drey } from './support/drey-cli';
import { REPO_ROOT, TestServer, startServer } from './support/server';

/**
 * Issue 40: every type survives every format. A project (test/fixtures/types) of a row of each type at
 * the edges a format could lose (DECIMAL(10,2), DECIMAL(38,2) past 2^53, HUGEINT past 2^64, BIGINT past
 * 2^53, a DOUBLE with binary noise, DATE, TIMESTAMP, TIME), then their negatives, then NULLs, exported
 * over HTTP in each format and read back by each format's usual reader, type by type.
 */
const PROJECT_DIR = join(REPO_ROOT, 'test', 'fixtures', 'types');
const RESULTS = '/api/service-v0/project/types/v1/datasets/types/results';

/** Runs `script` (Python) on `bytes` written to a file; its standard output parsed as JSON. */
function python(bytes: Buffer, script: string): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'drey-types-'));
  try {
    const file = join(dir, 'f.xlsx');
    writeFileSync(file, bytes);
    return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, file], { encoding: 'utf8' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('types that survive every format (issue 40)', () => {
  let t: TestServer;
  const exported = async (format: string): Promise<Buffer> => {
    const response = await fetch(`${t.url}${RESULTS}?x_format=${format}`);
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  };

  beforeAll(async () => {
    t = await startServer({ PROJECT_DIR });
  }, 120_000);
  afterAll(async () => {
    await t.close();
  });

  it('Arrow: DECIMAL as Decimal128 at its precision and scale, HUGEINT as Decimal256, TIME as Time64', async () => {
    const table = tableFromIPC(await exported('arrow'));
    const types = Object.fromEntries(
      table.schema.fields.map((field) => [
        field.name,
        DataType.isDecimal(field.type)
          ? `Decimal${field.type.bitWidth}(${field.type.precision},${field.type.scale})`
          : String(field.type),
      ]),
    );
    expect(types).toEqual({
      n: 'Int32',
      price: 'Decimal128(10,2)',
      total: 'Decimal128(38,2)',
      huge: 'Decimal256(39,0)',
      count: 'Int64',
      ratio: 'Float64',
      day: 'Date32<DAY>',
      moment: 'Timestamp<MICROSECOND>',
      at: 'Time64<MICROSECOND>',
      flag: 'Bool',
      label: 'Utf8',
    });
    const rows = [0, 1, 2].map((row) =>
      table.schema.fields.map((field) => {
        const value: unknown = table.getChild(field.name)!.get(row);
        if (value === null) return null;
        if (DataType.isDecimal(field.type)) {
          return decimalText(value as Uint32Array, field.type.scale);
        }
        return typeof value === 'bigint' ? `${value}n` : value;
      }),
    );
    expect(rows).toEqual([
      [
        1,
        '2320.80',
        '12345678901234567890.12',
        '12345678901234567890123456789012345678',
        '9007199254740993n',
        0.30000000000000004,
        // apache-arrow reads dates and timestamps as milliseconds since 1970, a time as microseconds.
        Date.UTC(2024, 11, 31),
        Date.UTC(2024, 11, 31, 8, 30),
        `${(8 * 3600 + 30 * 60 + 15) * 1_000_000}n`,
        true,
        'text',
      ],
      [
        2,
        '-0.05',
        '-9999999999999.99',
        '-9007199254740993',
        '-12n',
        -0.25,
        Date.UTC(1999, 0, 1),
        Date.UTC(1999, 0, 1, 0, 0, 0, 500),
        `${(23 * 3600 + 59 * 60 + 59) * 1_000_000}n`,
        false,
        '',
      ],
      [3, null, null, null, null, null, null, null, null, null, null],
    ]);
  });

  it('Parquet: DECIMAL at its precision and scale, HUGEINT as DECIMAL(38,0), every digit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drey-types-'));
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const file = join(dir, 'f.parquet');
      writeFileSync(file, await exported('parquet'));
      const read = await connection.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
      expect(
        Object.fromEntries(
          read.columnNames().map((name, i) => [name, String(read.columnTypes()[i])]),
        ),
      ).toEqual({
        n: 'INTEGER',
        price: 'DECIMAL(10,2)',
        total: 'DECIMAL(38,2)',
        huge: 'DECIMAL(38,0)',
        count: 'BIGINT',
        ratio: 'DOUBLE',
        day: 'DATE',
        moment: 'TIMESTAMP',
        at: 'TIME',
        flag: 'BOOLEAN',
        label: 'VARCHAR',
      });
      expect(read.getRowsJson()).toEqual([
        [
          1,
          '2320.80',
          '12345678901234567890.12',
          '12345678901234567890123456789012345678',
          '9007199254740993',
          0.30000000000000004,
          '2024-12-31',
          '2024-12-31 08:30:00',
          '08:30:15',
          true,
          'text',
        ],
        [
          2,
          '-0.05',
          '-9999999999999.99',
          '-9007199254740993',
          '-12',
          -0.25,
          '1999-01-01',
          '1999-01-01 00:00:00.5',
          '23:59:59',
          false,
          '',
        ],
        [3, null, null, null, null, null, null, null, null, null, null],
      ]);
    } finally {
      connection.closeSync();
      instance.closeSync();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Excel: decimals in the format of their scale, more than 15 digits as text, dates, timestamps and times as such', async () => {
    // Each cell as openpyxl reads it (the reader pandas uses), with its number format.
    const script = [
      'import json, sys, datetime, openpyxl',
      'sheet = openpyxl.load_workbook(sys.argv[1]).worksheets[0]',
      'def cell(c):',
      '    v = c.value',
      '    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)): v = v.isoformat()',
      '    return [v, c.number_format]',
      'print(json.dumps([[cell(c) for c in row] for row in sheet.iter_rows()]))',
    ].join('\n');
    const [header, ...rows] = python(await exported('xlsx'), script) as [unknown, string][][];
    expect(header.map(([name]) => name)).toEqual([
      'n',
      'price',
      'total',
      'huge',
      'count',
      'ratio',
      'day',
      'moment',
      'at',
      'flag',
      'label',
    ]);
    expect(rows).toEqual([
      [
        [1, 'General'],
        // Excel shows 2320.80, not General's 2320.8.
        [2320.8, '0.00'],
        // Past Excel's 15 digits: the text of every digit, which Excel would otherwise round.
        ['12345678901234567890.12', 'General'],
        ['12345678901234567890123456789012345678', 'General'],
        ['9007199254740993', 'General'],
        [0.30000000000000004, 'General'],
        ['2024-12-31T00:00:00', 'mm-dd-yy'],
        ['2024-12-31T08:30:00', 'yyyy-mm-dd hh:mm:ss'],
        ['08:30:15', 'hh:mm:ss'],
        [true, 'General'],
        ['text', 'General'],
      ],
      [
        [2, 'General'],
        [-0.05, '0.00'],
        // 15 digits: a number Excel holds exactly.
        [-9999999999999.99, '0.00'],
        ['-9007199254740993', 'General'],
        [-12, 'General'],
        [-0.25, 'General'],
        ['1999-01-01T00:00:00', 'mm-dd-yy'],
        ['1999-01-01T00:00:00.500000', 'yyyy-mm-dd hh:mm:ss'],
        ['23:59:59', 'hh:mm:ss'],
        [false, 'General'],
        ['', 'General'],
      ],
      [[3, 'General'], ...Array.from({ length: 10 }, () => [null, 'General'])],
    ]);
  });

  it('CSV: decimals at their scale, every digit, dates, timestamps and times as text', async () => {
    const lines = (await exported('csv')).toString('utf8').split('\r\n');
    expect(lines).toEqual([
      'n,price,total,huge,count,ratio,day,moment,at,flag,label',
      '1,2320.80,12345678901234567890.12,12345678901234567890123456789012345678,9007199254740993,0.30000000000000004,2024-12-31,2024-12-31T08:30:00,08:30:15,true,"text"',
      '2,-0.05,-9999999999999.99,-9007199254740993,-12,-0.25,1999-01-01,1999-01-01T00:00:00.5,23:59:59,false,""',
      '3,,,,,,,,,,',
      '',
    ]);
  });

  it('drey run: a decimal at its scale and a float as a person reads it, in a table and in CSV', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'drey-types-cli-'));
    try {
      const env = { PROJECT_DIR, DATA_DIR: dataDir };
      expect((await drey(['build'], env)).code).toBe(0);
      const table = await drey(['run', 'types'], env);
      expect(table.stderr).toBe('');
      const [header, , first, second] = table.stdout.split('\n');
      const cells = (line: string) => line.trim().split(/ {2,}/);
      expect(cells(header).slice(0, 6)).toEqual(['n', 'price', 'total', 'huge', 'count', 'ratio']);
      expect(cells(first).slice(0, 6)).toEqual([
        '1',
        '2320.80',
        '12345678901234567890.12',
        '12345678901234567890123456789012345678',
        '9007199254740993',
        '0.3',
      ]);
      expect(cells(second).slice(0, 6)).toEqual([
        '2',
        '-0.05',
        '-9999999999999.99',
        '-9007199254740993',
        '-12',
        '-0.25',
      ]);
      const csv = await drey(['run', 'types', '--format', 'csv'], env);
      expect(csv.stdout.split('\n')[1]).toMatch(
        /^1,2320\.80,12345678901234567890\.12,12345678901234567890123456789012345678,9007199254740993,0\.30000000000000004,/,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
