import { parseResultOptions } from '@/datasets/results/result-options';
import {
  RawQuery,
  parseBodySelections,
  parseQuerySelections,
} from '@/core/parameters/selection-request';
import { QueryModelsRequest, checkSql } from '@/admin/query-models.service';
import type { QueryModelsBodyDto } from '@/admin/dto/query-models-body.dto';

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

/**
 * The JSON form: `sql_query` and `parameters`, plus the built-ins at the top level, their JSON types checked
 * by {@link QueryModelsBodyDto}; the selections in `parameters` are the parameters domain's to read.
 */
export function queryModelsFromBody(body: QueryModelsBodyDto, maxRows: number): QueryModelsRequest {
  const { sql_query, parameters, ...builtins } = body;
  const selections = parseBodySelections(parameters);
  const sql = checkSql(sql_query);
  const options = parseResultOptions({ ...selections.builtins, ...builtins }, maxRows);
  return { sql, selections, options };
}
