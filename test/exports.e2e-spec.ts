import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DataType, Decimal, tableFromIPC } from 'apache-arrow';
import { decimalText } from './support/arrow-decimal';
import { MONTHLY } from './support/figures';
import { Api, L, P } from './support/api';
import { until } from './support/wait';
import { threadsOf } from './support/observe';
import { ADMIN_PASSWORD, TestServer, startServer } from './support/server';

type Row = Record<string, unknown>;

const TRANSACTIONS = `${P}/datasets/expense_transactions/results`;
const MONTHLY_RESULTS = `${P}/datasets/expenses_by_month/results`;

async function bytesOf(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

/** Rows of a Parquet file, read back by DuckDB itself. */
async function parquetRows(bytes: Buffer): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'drey-parquet-'));
  try {
    const file = join(dir, 'f.parquet');
    writeFileSync(file, bytes);
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const reader = await connection.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
    const rows = reader.getRowObjectsJson() as Row[];
    connection.closeSync();
    instance.closeSync();
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Rows of an Excel workbook's first sheet as openpyxl reads them (the reader pandas uses for .xlsx; Debian's
 * python3-openpyxl): each cell as JSON, dates as YYYY-MM-DD.
 */
function xlsxRows(bytes: Buffer): { header: unknown[]; rows: unknown[][] } {
  const dir = mkdtempSync(join(tmpdir(), 'drey-xlsx-'));
  try {
    const file = join(dir, 'f.xlsx');
    writeFileSync(file, bytes);
    const script = [
      'import json, sys, datetime, openpyxl',
      'sheet = openpyxl.load_workbook(sys.argv[1], read_only=True).worksheets[0]',
      'def cell(v):',
      '    return v.date().isoformat() if isinstance(v, datetime.datetime) else v',
      'print(json.dumps([[cell(v) for v in row] for row in sheet.iter_rows(values_only=True)]))',
    ].join('\n');
    const all = JSON.parse(
      execFileSync('/usr/bin/python3', ['-c', script, file], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      }),
    ) as unknown[][];
    return { header: all[0], rows: all.slice(1) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('exports at engine speed (issue 27): CSV, NDJSON, Parquet, Arrow and Excel written by DuckDB', () => {
  let t: TestServer;
  let api: Api;
  let json: { schema: { fields: { name: string }[] }; data: Row[] };
  /** The dataset of every transaction is private: an administrator reads it. */
  let auth: { authorization: string };
  const get = (path: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${t.url}${path}`, { headers: { ...auth, ...headers }, signal });

  beforeAll(async () => {
    t = await startServer();
    api = new Api(t.url);
    const token = await api.login('admin', ADMIN_PASSWORD);
    auth = { authorization: `Bearer ${token}` };
    const reply = await api.get(`${TRANSACTIONS}?x_limit=100000`, token);
    expect(reply.status).toBe(200);
    json = reply.body;
    expect(json.data).toHaveLength(1000);
  });
  afterAll(async () => {
    await t.close();
  });

  const exportDirs = (): string[] => {
    const root = join(t.env.DATA_DIR, 'exports');
    return readdirSync(root).flatMap((dir) => readdirSync(join(root, dir)));
  };

  it('writes every row of every format the JSON result has, by x_format and by Accept, in both layouts', async () => {
    const names = json.schema.fields.map((field) => field.name);
    // NDJSON: the same objects as the JSON result (decimals as numbers, dates as text).
    const ndjson = await get(`${TRANSACTIONS}?x_format=ndjson`);
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await ndjson.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Row);
    expect(lines).toEqual(json.data);

    // Parquet, read back by DuckDB.
    const parquet = await get(TRANSACTIONS, { accept: 'application/vnd.apache.parquet' });
    expect(parquet.status).toBe(200);
    expect(parquet.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(parquet.headers.get('content-disposition')).toBe(
      'attachment; filename="expense_transactions.parquet"',
    );
    const fromParquet = await parquetRows(await bytesOf(parquet));
    expect(fromParquet.map((row) => Object.keys(row))[0]).toEqual(names);
    expect(fromParquet.map((row) => String(row.id))).toEqual(
      json.data.map((row) => String(row.id)),
    );
    expect(fromParquet.map((row) => Number(row.amount))).toEqual(
      json.data.map((row) => row.amount),
    );

    // Arrow IPC stream, read by apache-arrow.
    const arrow = await get(`${TRANSACTIONS}?x_format=arrow`);
    expect(arrow.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    const table = tableFromIPC(await bytesOf(arrow));
    expect(table.numRows).toBe(1000);
    expect(table.schema.fields.map((field) => field.name)).toEqual(names);
    const arrowRows = table.toArray().map((row: { toJSON(): Row }) => row.toJSON());
    // apache-arrow reads a date as milliseconds since 1970.
    const dates = new Set(
      table.schema.fields.filter((field) => DataType.isDate(field.type)).map((field) => field.name),
    );
    expect(dates).toEqual(new Set(['date']));
    // A decimal as its exact digits (a Decimal128 at the column's scale), compared as a number.
    const scales = new Map(
      table.schema.fields
        .filter((field) => DataType.isDecimal(field.type))
        .map((field) => [field.name, (field.type as Decimal).scale]),
    );
    expect([...scales.keys()]).toEqual(['amount']);
    const arrowValue = (row: Row, name: string) => {
      const value = row[name];
      if (dates.has(name)) return normal(new Date(value as number));
      const scale = scales.get(name);
      if (scale !== undefined && value !== null) {
        return Number(decimalText(value as Uint32Array, scale));
      }
      return normal(value);
    };
    for (const name of names) {
      expect({ name, values: arrowRows.map((row) => arrowValue(row, name)) }).toEqual({
        name,
        values: json.data.map((row) => normal(row[name])),
      });
    }

    // Excel, read by openpyxl: numbers as numbers, dates as dates.
    const xlsx = await get(`${TRANSACTIONS}?x_format=xlsx`);
    expect(xlsx.headers.get('content-type')).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(xlsx.headers.get('content-disposition')).toBe(
      'attachment; filename="expense_transactions.xlsx"',
    );
    const sheet = xlsxRows(await bytesOf(xlsx));
    expect(sheet.header).toEqual(names);
    expect(sheet.rows).toHaveLength(1000);
    for (const [index, name] of names.entries()) {
      expect({ name, values: sheet.rows.map((row) => normal(row[index])) }).toEqual({
        name,
        values: json.data.map((row) => normal(row[name])),
      });
    }

    // The legacy layout exports the same rows.
    const legacy = await get(`${L}/dataset/expense-transactions?x_format=parquet`);
    expect(legacy.status).toBe(200);
    expect(await parquetRows(await bytesOf(legacy))).toHaveLength(1000);
    expect(exportDirs()).toEqual([]);
  });

  it('keeps the selections bound, applies x_select in its order, and x_limit and x_offset as a JSON page does', async () => {
    const whole = await get(
      `${MONTHLY_RESULTS}?x_format=parquet&x_select=total_amount&x_select=month`,
    );
    expect(whole.status).toBe(200);
    const all = await parquetRows(await bytesOf(whole));
    expect(all.map((row) => [row.month, Number(row.total_amount)])).toEqual(MONTHLY);
    expect(Object.keys(all[0])).toEqual(['total_amount', 'month']);
    // The rows of the JSON page of the same request, in every format (issue 40: they were every row).
    const page = await get(`${MONTHLY_RESULTS}?x_select=month&x_limit=2&x_offset=3`);
    const pageRows = ((await page.json()) as { data: { month: string }[] }).data;
    expect(pageRows.map((row) => row.month)).toEqual(MONTHLY.slice(3, 5).map(([month]) => month));
    const monthly = await get(
      `${MONTHLY_RESULTS}?x_format=parquet&x_select=total_amount&x_select=month&x_limit=2&x_offset=3`,
    );
    expect(monthly.status).toBe(200);
    const rows = await parquetRows(await bytesOf(monthly));
    expect(rows.map((row) => [row.month, Number(row.total_amount)])).toEqual(MONTHLY.slice(3, 5));
    const csv = await get(`${MONTHLY_RESULTS}?x_format=csv&x_select=month&x_limit=2&x_offset=3`);
    expect((await csv.text()).trim().split(/\r?\n/)).toEqual([
      'month',
      ...pageRows.map((row) => `"${row.month}"`),
    ]);
    const ndjson = await get(`${MONTHLY_RESULTS}?x_format=ndjson&x_limit=0`);
    expect(await ndjson.text()).toBe('');

    // A selection that reads as SQL is a value: it matches nothing and breaks nothing.
    const hostile = await get(
      `${TRANSACTIONS}?x_format=csv&${new URLSearchParams({
        description_filter: "x'); COPY (SELECT 1) TO 'pwned.csv'; --",
      }).toString()}`,
    );
    expect(hostile.status).toBe(200);
    expect(await hostile.text()).toBe(`${json.schema.fields.map((f) => f.name).join(',')}\r\n`);

    // Refused before the first byte, in every format, Arrow (written as it is read) included.
    for (const format of ['arrow', 'csv', 'parquet']) {
      const refused = await api.get(
        `${TRANSACTIONS}?x_format=${format}&x_select=nope`,
        auth.authorization.slice(7),
      );
      expect({ format, status: refused.status }).toEqual({ format, status: 400 });
    }
    // An empty result is a file with its columns and no row.
    const none = await get(`${TRANSACTIONS}?x_format=arrow&description_filter=no-such-expense`);
    expect(none.status).toBe(200);
    const empty = tableFromIPC(await bytesOf(none));
    expect([empty.numRows, empty.schema.fields.map((field) => field.name)]).toEqual([
      0,
      json.schema.fields.map((field) => field.name),
    ]);
    const unknown = await api.get(
      `${TRANSACTIONS}?x_format=xlsx&x_select=nope`,
      auth.authorization.slice(7),
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('unknown column "nope"');
    expect(exportDirs()).toEqual([]);
  });

  it('removes the file when the client goes away mid-download', async () => {
    const controller = new AbortController();
    const response = await get(`${TRANSACTIONS}?x_format=ndjson`, {}, controller.signal);
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    // Not a second read: undici's fetch never settles one on an aborted body it decompresses (gzip).
    await reader.cancel().catch(() => undefined);
    // The name is gone as soon as DuckDB has written it; nothing is left whatever the client does.
    expect(exportDirs()).toEqual([]);
    const again = await get(`${TRANSACTIONS}?x_format=csv`);
    expect(again.status).toBe(200);
    expect((await again.text()).split('\r\n')).toHaveLength(1002);
  });

  it('runs the threads that write exports below the event loop (BACKGROUND_THREAD_NICE, 10 by default)', async () => {
    const pid = t.server.child.pid!;
    const threads = () => threadsOf(pid);
    const before = new Map(threads().map(({ id, ticks }) => [id, ticks]));
    const exported = await get(`${TRANSACTIONS}?x_format=xlsx`);
    expect(exported.status).toBe(200);
    await exported.arrayBuffer();
    // The server lowers new threads within a second of their start.
    const after = await until(
      () => Promise.resolve(threads()),
      (all) => all.every((thread) => thread.id === pid || thread.nice === 10),
      5000,
    );
    expect(after.find((thread) => thread.id === pid)?.nice).toBe(0);
    const others = after.filter((thread) => thread.id !== pid);
    expect(others.filter((thread) => thread.nice !== 10)).toEqual([]);
    // The export's work ran on them: some thread other than the main one took CPU time meanwhile.
    expect(others.some((thread) => thread.ticks > (before.get(thread.id) ?? 0))).toBe(true);
  });
});

/** A value as both sides can be compared: dates as YYYY-MM-DD, numbers as numbers, BigInts as numbers. */
function normal(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return value;
  return value ?? null;
}
