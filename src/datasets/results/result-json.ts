import type { ResultOptions } from '@/datasets/results/result-options';
import type { CachedRun } from '@/datasets/results/result-codec';
import { HeldRows, shapeResult } from '@/datasets/results/result-shape';
import { legacyResult } from '@/legacy/datasets';

/** Pages up to this many rows are serialised whole (and kept); larger ones are written in pieces. */
export const WHOLE_PAGE_ROWS = 5000;
/** Small enough that a piece stays well under 128 KB, the size V8 allocates in the old generation. */
const PIECE_ROWS = 250;

/** `[a,b]` or `{a,b}` without its brackets, to join pieces of one array or object. */
function inner(json: string): string {
  return json.slice(1, -1);
}

/**
 * The JSON of one page of a cached result: one string for an ordinary page, or the same
 * bytes as pieces of a few hundred rows for a large one, so that no single giant string is built. Throws
 * (an unknown `x_select` column) before returning, never while the pieces are written.
 */
export function pageJson(
  run: CachedRun,
  options: ResultOptions,
  held: HeldRows = { offset: 0, total: run.result.rows.length },
): string | Iterable<string> {
  const count = Math.max(0, Math.min(options.limit, held.total - options.offset));
  if (count <= WHOLE_PAGE_ROWS) {
    return JSON.stringify(shapeResult(run.result, run.fields, options, held));
  }
  const head = shapeResult(run.result, run.fields, { ...options, limit: 0 }, held);
  head.data_details.num_rows = count;
  return currentPieces(run, options, count, head, held);
}

function* currentPieces(
  run: CachedRun,
  options: ResultOptions,
  count: number,
  head: ReturnType<typeof shapeResult>,
  held: HeldRows,
): Generator<string> {
  const { data, ...rest } = head;
  yield `${JSON.stringify(rest).slice(0, -1)},"data":${Array.isArray(data) ? '[' : '{'}`;
  // Each piece is serialised only when the response asks for more.
  function* pages(select: string[]): Generator<ReturnType<typeof shapeResult>['data']> {
    for (let done = 0; done < count; done += PIECE_ROWS) {
      const limit = Math.min(PIECE_ROWS, count - done);
      const part = { ...options, select, offset: options.offset + done, limit };
      yield shapeResult(run.result, run.fields, part, held).data;
    }
  }
  if (options.orientation === 'columns') {
    for (const [index, field] of head.schema.fields.entries()) {
      yield `${index > 0 ? ',' : ''}${JSON.stringify(field.name)}:[`;
      yield* withCommas(
        map(pages([field.name]), (data) =>
          inner(JSON.stringify((data as Record<string, unknown[]>)[field.name])),
        ),
      );
      yield ']';
    }
    yield '}}';
    return;
  }
  yield* withCommas(map(pages(options.select), (data) => inner(JSON.stringify(data))));
  yield ']}';
}

function* map<A, B>(items: Iterable<A>, convert: (item: A) => B): Generator<B> {
  for (const item of items) yield convert(item);
}

function* withCommas(parts: Iterable<string>): Generator<string> {
  let first = true;
  for (const part of parts) {
    if (part === '') continue;
    yield first ? part : `,${part}`;
    first = false;
  }
}

/** The JSON of every row (as records, with `dimensions`), whole or in pieces like {@link pageJson}. */
export function wholeJson(run: CachedRun): string | Iterable<string> {
  if (run.result.rows.length <= WHOLE_PAGE_ROWS) {
    return JSON.stringify(legacyResult(run.result, run.fields));
  }
  return legacyPieces(run);
}

function* legacyPieces(run: CachedRun): Generator<string> {
  const { schema } = legacyResult({ ...run.result, rows: [] }, run.fields) as { schema: unknown };
  yield `{"schema":${JSON.stringify(schema)},"data":[`;
  const rows = run.result.rows;
  function* parts(): Generator<string> {
    for (let done = 0; done < rows.length; done += PIECE_ROWS) {
      const slice = { ...run.result, rows: rows.slice(done, done + PIECE_ROWS) };
      yield inner(JSON.stringify((legacyResult(slice, run.fields) as { data: unknown[] }).data));
    }
  }
  yield* withCommas(parts());
  yield ']}';
}
