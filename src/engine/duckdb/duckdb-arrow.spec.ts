import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { DataType, Decimal, RecordBatchReader, Table } from 'apache-arrow';
import { ARROW_BATCH_ROWS, ARROW_BATCH_TEXT_BYTES } from '@/engine/duckdb/arrow-batches';
import { arrowStream } from '@/engine/duckdb/duckdb-arrow';

let instance: DuckDBInstance;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
});

afterAll(() => instance.closeSync());

/** The stream's bytes read back by apache-arrow, with the rows `done` was told. */
async function exported(sql: string): Promise<{ table: Table; batchRows: number[]; rows: number }> {
  const connection: DuckDBConnection = await instance.connect();
  let rows = -1;
  const stream = arrowStream(connection, sql, [], [], 30_000, (sent) => {
    rows = sent;
    connection.closeSync();
  });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const reader = RecordBatchReader.from(Buffer.concat(chunks));
  const batches = [...reader];
  return { table: new Table(batches), batchRows: batches.map((batch) => batch.numRows), rows };
}

/**
 * A Decimal's value as its exact digits at its scale. apache-arrow gives the value's 32-bit words, least
 * significant first (and its own toString misreads a Decimal256's), so they are read as one two's
 * complement integer here.
 */
function decimalText(words: Uint32Array, scale: number): string {
  let value = 0n;
  for (let index = words.length - 1; index >= 0; index--)
    value = (value << 32n) | BigInt(words[index]);
  const bits = BigInt(words.length * 32);
  if (value >> (bits - 1n)) value -= 1n << bits;
  return exactDecimal(value, scale);
}

/** `unscaled` / 10^scale, every digit written. */
function exactDecimal(unscaled: bigint, scale: number): string {
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const sign = unscaled < 0n ? '-' : '';
  return scale === 0 ? sign + digits : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** A cell as apache-arrow reads it, decimals as their text (see {@link decimalText}), bytes in hex. */
function cell(value: unknown, type: DataType): unknown {
  if (value === null) return value;
  if (DataType.isDecimal(type)) return decimalText(value as Uint32Array, type.scale);
  if (DataType.isBinary(type)) return Buffer.from(value as Uint8Array).toString('hex');
  return value;
}

describe('arrowStream', () => {
  it('gathers chunks into batches and keeps every value, NULL and type across their seams', async () => {
    // The filter leaves chunks of DuckDB's short of 2,048 rows, so batches join chunks in the middle
    // of a byte of their validity bitmaps; NULLs start in a later batch for `late` and end in an
    // earlier one for `early`, so some batches of each column have a validity bitmap and some none.
    const { table, batchRows, rows } = await exported(`
      SELECT i,
        CASE WHEN i % 7 = 3 THEN NULL ELSE i * 3 END::INTEGER AS n,
        CASE WHEN i % 11 = 0 THEN NULL WHEN i % 5 = 0 THEN '' WHEN i % 2 = 0 THEN 'short' || i
          ELSE 'a text longer than twelve bytes ' || i END AS s,
        CASE WHEN i % 13 = 0 THEN NULL ELSE i % 2 = 0 END AS b,
        CASE WHEN i > 100000 AND i % 17 = 0 THEN NULL ELSE (i / 4)::DECIMAL(12, 2) END AS late,
        CASE WHEN i < 50000 AND i % 9 = 0 THEN NULL ELSE -i END::BIGINT AS early,
        DATE '2024-01-01' + (i % 400)::INTEGER AS day,
        TIMESTAMP '2024-01-01' + to_microseconds(i) AS ts
      FROM range(200000) t(i) WHERE i % 3 <> 1`);
    const expected = Array.from({ length: 200000 }, (_, i) => i).filter((i) => i % 3 !== 1);
    expect(rows).toBe(expected.length);
    expect(table.numRows).toBe(expected.length);
    expect(batchRows.length).toBeGreaterThan(1);
    expect(Math.max(...batchRows)).toBeLessThanOrEqual(ARROW_BATCH_ROWS);
    const column = (name: string) => table.getChild(name)!;
    const [id, n, s, b, late, early, day, ts] = [
      'i',
      'n',
      's',
      'b',
      'late',
      'early',
      'day',
      'ts',
    ].map(column);
    const wrong: string[] = [];
    expected.forEach((i, row) => {
      const got = [
        id.get(row),
        n.get(row),
        s.get(row),
        b.get(row),
        cell(late.get(row), late.type),
        early.get(row),
      ];
      const want = [
        BigInt(i),
        i % 7 === 3 ? null : i * 3,
        i % 11 === 0
          ? null
          : i % 5 === 0
            ? ''
            : i % 2 === 0
              ? `short${i}`
              : `a text longer than twelve bytes ${i}`,
        i % 13 === 0 ? null : i % 2 === 0,
        // Exact, at the column's scale: DECIMAL(12, 2) as a Decimal128 (i / 4 rounds half away from zero).
        i > 100000 && i % 17 === 0 ? null : (i / 4).toFixed(2),
        i < 50000 && i % 9 === 0 ? null : BigInt(-i),
      ];
      // apache-arrow reads a date and a timestamp as milliseconds since 1970.
      const days = i % 400;
      if (day.get(row) !== Date.UTC(2024, 0, 1 + days)) wrong.push(`day at ${i}`);
      if (Number(ts.get(row)) !== Date.UTC(2024, 0, 1) + i / 1000) wrong.push(`ts at ${i}`);
      got.forEach((value, index) => {
        if (value !== want[index]) wrong.push(`${index} at ${i}: ${String(value)}`);
      });
    });
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(table.getChild('late')!.nullCount).toBe(
      expected.filter((i) => i > 100000 && i % 17 === 0).length,
    );
  });

  it('keeps every type it maps, and the NULLs of each, over several chunks', async () => {
    // Each mapping of arrowColumn: the types Arrow shares (copied as they are), decimals of each of
    // DuckDB's widths (widened to 16 bytes), huge integers (to 32), blobs, and the ones cast to text; every
    // seventh row NULL in every column.
    const rows = 5000;
    const { table, rows: sent } = await exported(`
      SELECT ${[
        '(i % 100)::TINYINT AS t8',
        '(i * 7 - 10000)::SMALLINT AS t16',
        '(i * 100000)::UINTEGER AS u32',
        '(i % 200)::UTINYINT AS u8',
        'i::USMALLINT AS u16',
        'i::UBIGINT * 4000000000000 AS u64',
        '(i / 8)::FLOAT AS f32',
        '(i / 4)::DOUBLE AS f64',
        // Past 2^53 and negative: every digit kept.
        "(i::HUGEINT * 3 - 2500) * '10000000000000000000000000000000000'::HUGEINT AS huge",
        "'340282366920938463463374607431768211455'::UHUGEINT - i::UHUGEINT AS uhuge",
        '((i - 2500) / 10)::DECIMAL(4, 1) AS d16',
        '((i - 2500) * 1.001)::DECIMAL(9, 3) AS d32',
        '((i - 2500) * 1234567.0001)::DECIMAL(18, 4) AS d64',
        "(i - 2500) * '12345678901234567890.12'::DECIMAL(38, 2) AS d128",
        "TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(i) AS tz",
        "(TIMESTAMP '2024-01-01' + to_microseconds(i * 1001))::TIMESTAMP_NS AS ns",
        "(TIMESTAMP '2024-01-01' + to_milliseconds(i))::TIMESTAMP_MS AS ms",
        "(TIMESTAMP '2024-01-01' + to_seconds(i))::TIMESTAMP_S AS s",
        "TIME '10:00:00' + to_microseconds(i % 3600 * 1000001) AS time",
        "TIMETZ '10:00:00+02' AS timetz",
        "unhex(lpad(to_hex(i), 6, '0')) AS blob",
        'INTERVAL (i) DAY AS interval',
        '[i, i + 1] AS list',
        "(['a', 'b'])[i % 2 + 1]::ENUM('a', 'b') AS enum",
        // Every length from empty to past the 12 bytes DuckDB keeps inline.
        'repeat(chr((97 + i % 26)::INTEGER), i % 15) AS text',
      ]
        .map((column) =>
          column.replace(/^(.*) AS (\w+)$/, 'CASE WHEN i % 7 = 6 THEN NULL ELSE $1 END AS $2'),
        )
        .join(', ')}
      FROM range(${rows}) t(i)`);
    expect(sent).toBe(rows);
    expect(table.numRows).toBe(rows);
    const expected: Record<string, (i: number) => unknown> = {
      t8: (i) => i % 100,
      t16: (i) => i * 7 - 10000,
      u32: (i) => i * 100000,
      u8: (i) => i % 200,
      u16: (i) => i,
      u64: (i) => BigInt(i) * 4000000000000n,
      f32: (i) => Math.fround(i / 8),
      f64: (i) => i / 4,
      huge: (i) => `${(BigInt(i) * 3n - 2500n) * 10n ** 34n}`,
      uhuge: (i) => `${2n ** 128n - 1n - BigInt(i)}`,
      d16: (i) => exactDecimal(BigInt(i - 2500), 1),
      d32: (i) => exactDecimal(BigInt(i - 2500) * 1001n, 3),
      d64: (i) => exactDecimal(BigInt(i - 2500) * 12345670001n, 4),
      d128: (i) => exactDecimal(BigInt(i - 2500) * 1234567890123456789012n, 2),
      // apache-arrow reads a timestamp as milliseconds since 1970.
      tz: (i) => Date.UTC(2024, 0, 1) + i * 1000,
      ns: (i) => Date.UTC(2024, 0, 1) + (i * 1001) / 1000,
      ms: (i) => Date.UTC(2024, 0, 1) + i,
      s: (i) => Date.UTC(2024, 0, 1) + i * 1000,
      // Microseconds since midnight.
      time: (i) => 36_000_000_000n + BigInt((i % 3600) * 1000001),
      timetz: () => '10:00:00+02',
      blob: (i) => i.toString(16).padStart(6, '0'),
      interval: (i) => (i === 0 ? '00:00:00' : `${i} day${i === 1 ? '' : 's'}`),
      list: (i) => `[${i}, ${i + 1}]`,
      enum: (i) => (i % 2 ? 'b' : 'a'),
      text: (i) => String.fromCharCode(97 + (i % 26)).repeat(i % 15),
    };
    const wrong: string[] = [];
    for (const [name, value] of Object.entries(expected)) {
      const column = table.getChild(name)!;
      expect({ name, nulls: column.nullCount }).toEqual({ name, nulls: Math.floor(rows / 7) });
      for (let i = 0; i < rows; i++) {
        const want = i % 7 === 6 ? null : value(i);
        const got = cell(column.get(i), column.type);
        if (got !== want) wrong.push(`${name} at ${i}: ${String(got)}, not ${String(want)}`);
      }
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(
      Object.fromEntries(table.schema.fields.map((field) => [field.name, String(field.type)])),
    ).toEqual({
      t8: 'Int8',
      t16: 'Int16',
      u32: 'Uint32',
      u8: 'Uint8',
      u16: 'Uint16',
      u64: 'Uint64',
      f32: 'Float32',
      f64: 'Float64',
      // Decimal[precision e scale]; a HUGEINT's 39 digits need a Decimal256 (below).
      huge: 'Decimal[39e0]',
      uhuge: 'Decimal[39e0]',
      d16: 'Decimal[4e+1]',
      d32: 'Decimal[9e+3]',
      d64: 'Decimal[18e+4]',
      d128: 'Decimal[38e+2]',
      tz: 'Timestamp<MICROSECOND, UTC>',
      ns: 'Timestamp<NANOSECOND>',
      ms: 'Timestamp<MILLISECOND>',
      s: 'Timestamp<SECOND>',
      time: 'Time64<MICROSECOND>',
      timetz: 'Utf8',
      blob: 'Binary',
      interval: 'Utf8',
      list: 'Utf8',
      enum: 'Utf8',
      text: 'Utf8',
    });
    const bitWidth = (name: string) =>
      (table.schema.fields.find((f) => f.name === name)!.type as Decimal).bitWidth;
    expect(['huge', 'uhuge', 'd16', 'd128'].map(bitWidth)).toEqual([256, 256, 128, 128]);
  });

  it('writes the extremes of HUGEINT, UHUGEINT and DECIMAL(38, s) without losing a digit', async () => {
    const { table } = await exported(`
      SELECT * FROM (VALUES
        ('-170141183460469231731687303715884105727'::HUGEINT - 1, 0::UHUGEINT,
          '-99999999999999999999999999999999999.999'::DECIMAL(38, 3), -1::HUGEINT),
        ('170141183460469231731687303715884105727'::HUGEINT,
          '340282366920938463463374607431768211455'::UHUGEINT,
          '99999999999999999999999999999999999.999'::DECIMAL(38, 3), 9007199254740993::HUGEINT)
      ) t(huge, uhuge, d, small)`);
    const column = (name: string) => {
      const vector = table.getChild(name)!;
      return [0, 1].map((row) => cell(vector.get(row), vector.type));
    };
    expect(['huge', 'uhuge', 'd', 'small'].map(column)).toEqual([
      ['-170141183460469231731687303715884105728', '170141183460469231731687303715884105727'],
      ['0', '340282366920938463463374607431768211455'],
      ['-99999999999999999999999999999999999.999', '99999999999999999999999999999999999.999'],
      ['-1', '9007199254740993'],
    ]);
  });

  it('sends a batch early once its text reaches the bound', async () => {
    const { table, batchRows } = await exported(
      `SELECT repeat('x', 10000) || i AS s FROM range(6000) t(i)`,
    );
    expect(table.numRows).toBe(6000);
    // 16 MiB of text is about 1,700 rows of 10 KB: a chunk's 2,048 rows each pass the bound.
    const rowsAtBound = Math.ceil(ARROW_BATCH_TEXT_BYTES / 10_000);
    expect(batchRows.length).toBeGreaterThanOrEqual(Math.floor(6000 / (rowsAtBound + 2048)));
    expect(Math.max(...batchRows)).toBeLessThan(rowsAtBound + 2048);
    expect(table.getChild('s')!.get(5999)).toBe(`${'x'.repeat(10000)}5999`);
  });

  it('stops reading from DuckDB and frees the connection when the reader goes away', async () => {
    const connection = await instance.connect();
    let finished!: (rows: number) => void;
    const done = new Promise<number>((resolve) => (finished = resolve));
    const stream = arrowStream(
      connection,
      'SELECT i, i::VARCHAR AS s FROM range(5000000) t(i)',
      [],
      [],
      30_000,
      (rows) => {
        connection.closeSync();
        finished(rows);
      },
    );
    let bytes = 0;
    for await (const chunk of stream) {
      bytes += (chunk as Buffer).length;
      break;
    }
    expect(bytes).toBeGreaterThan(0);
    const rows = await done;
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThan(5_000_000);
  });

  it('sends the schema of a result without rows', async () => {
    const { table, rows } = await exported(`SELECT 1 AS a, 'x' AS b WHERE false`);
    expect(rows).toBe(0);
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((field) => field.name)).toEqual(['a', 'b']);
  });
});
