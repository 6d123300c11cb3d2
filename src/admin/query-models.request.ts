import { InvalidRequestError } from '@/core/errors';
import { parseResultOptions } from '@/datasets/results/result-options';
import {
  RawQuery,
  checkJsonBuiltins,
  parseBodySelections,
  parseQuerySelections,
} from '@/core/parameters/selection-request';
import { QueryModelsRequest, checkSql } from '@/admin/query-models.service';

/**
 * The query-string form of query-models: `x_sql_query` with x_orientation, x_select, x_limit, x_offset
 * and the selections. `maxRows` (MAX_RESULT_ROWS) bounds `x_limit`.
 */
export function queryModelsFromQuery(query: RawQuery, maxRows: number): QueryModelsRequest {
  const request = parseQuerySelections(query);
  const raw = request.builtins.x_sql_query;
  const sql = checkSql(Array.isArray(raw) && raw.length === 1 ? raw[0] : raw);
  return { sql, selections: request, options: parseResultOptions(request.builtins, maxRows) };
}

/** The JSON form: `sql_query` and `parameters`, plus the built-ins at the top level. */
export function queryModelsFromBody(body: unknown, maxRows: number): QueryModelsRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError('The body must be a JSON object with sql_query');
  }
  const { sql_query: raw, parameters = {}, ...builtins } = body as Record<string, unknown>;
  checkJsonBuiltins(builtins);
  const selections = parseBodySelections(parameters);
  const sql = checkSql(raw);
  const options = parseResultOptions({ ...selections.builtins, ...builtins }, maxRows);
  return { sql, selections, options };
}
