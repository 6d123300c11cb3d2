import { didYouMean } from '@/core/did-you-mean';
import {
  FromQuery,
  ProblemSink,
  ValueWidgetType,
  Variant,
  isRecord,
} from '@/core/parameters/parameter-definition';
import { idFrom, shown } from '@/core/parameters/raw-values';
import { SPEC_KEYS, parseValueSpec } from '@/core/parameters/value-spec';

/**
 * The body of a non-select parameter: its widget written at the top, or from a query (`from_query`), or,
 * for a child of a select, one variant per set of the parent's option ids.
 */
export function parseValueBody(
  item: Record<string, unknown>,
  widget: ValueWidgetType,
  at: string,
  hasParent: boolean,
  sink: ProblemSink,
): { variants: Variant[]; fromQuery: FromQuery | null } {
  const problem = (path: string, message: string) => sink.problems.add(sink.file, path, message);
  const specKeys = SPEC_KEYS[widget].filter((key) => item[key] !== undefined);

  if (item.variants !== undefined) {
    for (const key of specKeys) problem(`${at}.${key}`, 'belongs inside each variant');
    if (item.from_query !== undefined)
      problem(`${at}.from_query`, 'cannot be combined with variants');
    if (!hasParent) problem(`${at}.variants`, 'need a parent: set `parent` to a select parameter');
    return {
      variants: parseVariants(item.variants, widget, `${at}.variants`, sink),
      fromQuery: null,
    };
  }
  if (hasParent) {
    problem(
      `${at}.parent`,
      `a ${widget} parameter with a parent needs \`variants\`: its widget per set of the parent's option ids`,
    );
  }
  if (item.from_query !== undefined) {
    if (widget === 'text') {
      problem(`${at}.from_query`, 'is for date, date_range, number and number_range parameters');
      return { variants: [], fromQuery: null };
    }
    const sql = readSql(item.from_query, `${at}.from_query`, sink);
    parseValueSpec(widget, item, { path: at, row: null }, sink, 'fields');
    const written = Object.fromEntries(specKeys.map((key) => [key, item[key]]));
    return { variants: [], fromQuery: sql === null ? null : { sql, written } };
  }
  const spec = parseValueSpec(widget, item, { path: at, row: null }, sink, 'complete');
  return {
    variants: spec ? [{ parentOptionIds: null, spec, origin: { path: at, row: null } }] : [],
    fromQuery: null,
  };
}

/** `options_from` and `from_query`: a mapping with the SQL text to run at build time. */
export function readSql(raw: unknown, at: string, sink: ProblemSink): string | null {
  const sql = isRecord(raw) ? raw.sql : undefined;
  if (typeof sql === 'string' && sql.trim() !== '') {
    for (const key of Object.keys(raw as object)) {
      if (key !== 'sql') {
        sink.problems.add(
          sink.file,
          `${at}.${key}`,
          `is not a known key${didYouMean(key, ['sql'])}`,
        );
      }
    }
    return sql;
  }
  sink.problems.add(sink.file, at, 'must be a mapping with `sql`: the query to run at build time');
  return null;
}

function parseVariants(
  raw: unknown,
  widget: ValueWidgetType,
  at: string,
  sink: ProblemSink,
): Variant[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    sink.problems.add(sink.file, at, 'must be a non-empty list of variants');
    return [];
  }
  const known = new Set(['parent_option_ids', ...SPEC_KEYS[widget]]);
  /** Which variant claimed each parent option id: one id must decide one widget. */
  const claimed = new Map<string, number>();
  const variants: Variant[] = [];
  raw.forEach((entry: unknown, index) => {
    const path = `${at}[${index}]`;
    if (!isRecord(entry)) {
      sink.problems.add(sink.file, path, 'must be a mapping with parent_option_ids and the widget');
      return;
    }
    for (const key of Object.keys(entry)) {
      if (!known.has(key)) {
        sink.problems.add(
          sink.file,
          `${path}.${key}`,
          `is not a known key of a ${widget} variant${didYouMean(key, known)}`,
        );
      }
    }
    const ids = readVariantIds(entry.parent_option_ids, `${path}.parent_option_ids`, sink);
    for (const id of ids) {
      const other = claimed.get(id);
      if (other !== undefined) {
        sink.problems.add(
          sink.file,
          `${path}.parent_option_ids`,
          `parent option ${shown(id)} is already in ${at}[${other}]: one parent option id can have one variant`,
        );
      }
      claimed.set(id, other ?? index);
    }
    const spec = parseValueSpec(widget, entry, { path, row: null }, sink, 'complete');
    if (spec && ids.length > 0) {
      variants.push({ parentOptionIds: ids, spec, origin: { path, row: null } });
    }
  });
  return variants;
}

function readVariantIds(raw: unknown, at: string, sink: ProblemSink): string[] {
  const ids = Array.isArray(raw) ? raw.map(idFrom) : [];
  if (ids.length === 0 || ids.some((id) => id === null)) {
    sink.problems.add(sink.file, at, 'must be a non-empty list of option ids of the parent');
    return [];
  }
  const unique = new Set(ids as string[]);
  if (unique.size !== ids.length) sink.problems.add(sink.file, at, 'lists an option id twice');
  return [...unique];
}
