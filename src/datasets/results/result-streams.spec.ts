import { StreamOptions, encodeRows, exportRows } from '@/datasets/results/result-streams';

const ALL: StreamOptions = { select: [], offset: 0, limit: Number.POSITIVE_INFINITY };
import { RowBatch, rowsBatch } from '@/engine/duckdb/duckdb-stream';
import type { JsonValue } from '@/engine/sql/query-result';

const COLUMNS: RowBatch['columns'] = [
  { name: 'id', type: 'integer', databaseType: 'BIGINT' },
  { name: 'note', type: 'string', databaseType: 'VARCHAR' },
];

function source(batches: JsonValue[][][]) {
  const state = { closed: false, pulled: 0 };
  async function* generate(): AsyncGenerator<RowBatch> {
    try {
      for (const rows of batches) {
        // As the engine does: every batch comes after a wait for DuckDB.
        await Promise.resolve();
        state.pulled++;
        yield rowsBatch(COLUMNS, rows);
      }
    } finally {
      state.closed = true;
    }
  }
  return { batches: generate(), state };
}

async function text(chunks: AsyncIterable<Buffer>): Promise<string> {
  let all = '';
  for await (const chunk of chunks) all += chunk.toString('utf8');
  return all;
}

describe('encodeRows', () => {
  it('writes a CSV header and every row of every batch, quoting where needed', async () => {
    const { batches } = source([
      [
        [1, 'a, b'],
        [2, null],
      ],
      [[3, 'say "x"']],
    ]);
    expect(await text(encodeRows(batches, 'csv', ALL))).toBe(
      'id,note\r\n1,"a, b"\r\n2,\r\n3,"say ""x"""\r\n',
    );
  });

  it('escapes text cells a spreadsheet would run (x_csv_formulas=escaped, the default), never numbers', async () => {
    const rows = (): JsonValue[][][] => [
      [
        [-5, '=HYPERLINK("http://evil.example","x")'],
        [-1, '+1+1'],
        [2, ' @SUM(A1)'],
        [3, 'Acme;=1+1'],
        [4, 'plain'],
        [5, ''],
        [6, null],
      ],
    ];
    expect(await text(encodeRows(source(rows()).batches, 'csv', ALL))).toBe(
      'id,note\r\n-5,"\'=HYPERLINK(""http://evil.example"",""x"")"\r\n-1,"\'+1+1"\r\n' +
        '2,"\' @SUM(A1)"\r\n3,"Acme;=1+1"\r\n4,"plain"\r\n5,""\r\n6,\r\n',
    );
    // raw: the values as stored, quoted only where RFC 4180 needs it.
    const raw = encodeRows(source(rows()).batches, 'csv', { ...ALL, csvFormulas: 'raw' });
    expect(await text(raw)).toBe(
      'id,note\r\n-5,"=HYPERLINK(""http://evil.example"",""x"")"\r\n-1,+1+1\r\n' +
        '2, @SUM(A1)\r\n3,Acme;=1+1\r\n4,plain\r\n5,\r\n6,\r\n',
    );
  });

  it('writes a header for a result without rows', async () => {
    const { batches } = source([[]]);
    expect(await text(encodeRows(batches, 'csv', ALL))).toBe('id,note\r\n');
  });

  it('applies a column selection, an offset and a limit across batches, and stops the source once done', async () => {
    const { batches, state } = source([[[1, 'a']], [[2, 'b']], [[3, 'c']], [[4, 'd']]]);
    const options: StreamOptions = {
      select: exportRows({ x_select: ['note'] }, 1000).select,
      offset: 1,
      limit: 2,
    };
    expect(await text(encodeRows(batches, 'ndjson', options))).toBe('{"note":"b"}\n{"note":"c"}\n');
    expect(state.pulled).toBe(3);
    expect(state.closed).toBe(true);
  });

  it('refuses an unknown column before writing', async () => {
    const { batches } = source([[[1, 'a']]]);
    await expect(
      text(
        encodeRows(batches, 'csv', {
          ...ALL,
          select: exportRows({ x_select: 'nope' }, 1000).select,
        }),
      ),
    ).rejects.toThrow('unknown column "nope"');
  });
});
