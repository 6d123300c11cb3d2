import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '@/core/caller';
import { callerView, requireScope } from '@/core/project/scope';
import { embedRequest } from '@/core/embedding/embed-request';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { CallerSlots, slotOwner } from '@/core/caller-slots';
import { ResultTooLargeError } from '@/core/errors';
import { Answer, DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import type { CachedRun } from '@/datasets/results/result-codec';
import {
  callerParts,
  canonicalSelections,
  resultKeyText,
  storeKey,
} from '@/datasets/results/result-keys';
import {
  SchemaField,
  checkSelect,
  schemaFields,
  shapeResult,
} from '@/datasets/results/result-shape';
import type { CompiledDataset } from '@/engine/compile';
import { Engine } from '@/engine/engine';
import type { Environment } from '@/engine/environment/environment';
import type { JsonValue, QueryResult, RowWindow } from '@/engine/sql/query-result';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import { findItem } from '@/core/project/items';
import { DatasetSpec, findModel } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';
import type {
  DatasetRows,
  KeyedRead,
  ResultKey,
  ResultPage,
  ResultRead,
  RowsWanted,
} from '@/datasets/result-read';

/**
 * Results of up to this many rows are read in one query and kept whole, so that any page of them is cut
 * from memory; larger ones are answered a page at a time. Reading that many rows costs a few milliseconds
 * and a few megabytes; a larger result's first request reads them once, before counting its rows.
 */
export const WHOLE_RESULT_ROWS = 10_000;

/** A result as the cache gave it (see {@link CachedRun}), with how it was found. */
type Summary = CachedRun & { answer: Answer };

/**
 * The results reader: a dataset's rows, columns and totals for a caller and a selection, from the results
 * cache (one query shared by every identical read running at the time) or the engine; its exports are
 * DatasetExports'. It speaks rows, never HTTP: the HTTP replies (bytes, ETags, 304s, compression,
 * streaming) are made beside the controllers (dataset-replies.ts); MCP and dashboards read rows here. Whose
 * query slots a read takes is an argument (the caller's address), not read from the request being served.
 */
@Injectable()
export class DatasetsService {
  constructor(
    private readonly engine: Engine,
    private readonly parameters: ParameterCatalogService,
    private readonly cache: DatasetResultCache,
    private readonly served: ServedProject,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.slots = new CallerSlots(config.callerSlots);
  }

  /** Uncached queries running per caller (a cached answer takes none). */
  private readonly slots: CallerSlots;

  /**
   * A dataset's rows for `caller` (`name` as configured) and the selections of `request`: the window
   * asked, in the columns asked, with the result's total. `address` is the client's, whose slots an
   * anonymous caller's uncached query takes.
   */
  async rows(
    caller: Caller,
    name: string,
    request: ParameterRequest,
    wanted: RowsWanted,
    address: string | undefined,
  ): Promise<DatasetRows> {
    const read = await this.resolve(caller, name, request, address);
    const { run, held } =
      this.keptWhole(read, wanted.columns) ??
      (await this.withBuild(read, (keyed) => this.page(keyed, wanted, wanted.columns)));
    const { offset, limit, columns: select } = wanted;
    const shaped = shapeResult(
      run.result,
      run.fields,
      { orientation: 'rows', select, offset, limit },
      held,
    );
    const types = new Map(run.result.columns.map((column) => [column.name, column.databaseType]));
    return {
      columns: shaped.schema.fields,
      databaseTypes: shaped.schema.fields.map((field) => types.get(field.name) ?? ''),
      rows: shaped.data as JsonValue[][],
      total: shaped.total_num_rows,
    };
  }

  /**
   * A read of `name` for `caller` and the selections of `request`: the dataset found and its scope
   * checked, the selections validated, defaulted, cascaded and made canonical. Nothing is run yet.
   */
  async resolve(
    caller: Caller,
    name: string,
    request: ParameterRequest,
    address: string | undefined,
  ): Promise<ResultRead & { owner: string }> {
    const dataset = findItem(this.served.current, 'dataset', name, caller);
    requireScope(dataset.scope, caller, `the dataset "${dataset.name}"`);
    const catalog = await this.parameters.catalog();
    const view = callerView(caller);
    const selections = canonicalSelections(
      catalog,
      catalog.selections(
        dataset.parameters,
        embedRequest(caller, dataset.parameters, request),
        view,
      ),
    );
    let compiled: CompiledDataset | undefined;
    return {
      dataset,
      selections,
      view,
      compiled: () => (compiled ??= this.engine.compileDataset(dataset, selections, view)),
      owner: slotOwner(caller.username, address),
    };
  }

  /**
   * The key of a read on the build being served, found without holding that build (no lease, no
   * promise), for what is kept per result and served without a query; undefined while a build another
   * process switched in is not followed yet (then {@link withBuild} follows it).
   */
  keyNow(read: ResultRead): ResultKey | undefined {
    const buildId = this.engine.freshBuildId();
    return buildId === undefined ? undefined : this.keyOf(read, buildId);
  }

  /**
   * A result kept whole in this process's memory for the build being served, found without holding that
   * build (no lease, no promise): such a read runs no query, so it puts no rows under any key. Undefined
   * when the result is not in memory, is not kept whole (each page of it is kept apart), must not be
   * reused, or while a build another process switched in is not followed yet.
   */
  private keptWhole(read: ResultRead, select: string[]): ResultPage | undefined {
    const key = this.keyNow(read);
    if (key === undefined || !key.cacheable) return undefined;
    const run = this.cache.kept(storeKey(key.buildId, read.dataset.name, key.keyText));
    if (run === undefined || run.total !== undefined) return undefined;
    this.cache.answered(read.dataset.name, 'memory');
    checkSelect(run, select);
    return { run };
  }

  /**
   * Holds the environment being served while `work` keys and runs the read on it, so that a build
   * switching in meanwhile cannot put its rows under the previous build's key.
   */
  async withBuild<T>(read: ResultRead, work: (keyed: KeyedRead) => Promise<T>): Promise<T> {
    const lease = await this.engine.acquireEnvironment();
    try {
      return await work(this.keyedOn(read, lease.environment));
    } finally {
      lease.release();
    }
  }

  /**
   * The rows `window` asks of a keyed read: the whole result when it is kept whole, else that page of it
   * (read and kept apart). `select` names columns that must exist, checked before a page of a large
   * result is read, so that a wrong name runs no query. Counts the read's answer once.
   */
  async page(keyed: KeyedRead, window: RowWindow, select: string[]): Promise<ResultPage> {
    const summary = await this.summary(keyed);
    try {
      checkSelect(summary, select);
    } catch (error) {
      this.cache.answered(keyed.dataset.name, summary.answer);
      throw error;
    }
    return this.rowsOf(keyed, summary, window);
  }

  /**
   * Every row, within the cap of one response: a larger result is a 400 carrying its size and the cap,
   * which the layout that asked words.
   */
  async whole(keyed: KeyedRead): Promise<CachedRun> {
    const summary = await this.summary(keyed);
    const total = summary.total ?? summary.result.rows.length;
    const max = this.config.maxResultRows;
    if (total > max) {
      this.cache.answered(keyed.dataset.name, summary.answer);
      throw new ResultTooLargeError(total, max);
    }
    return (await this.rowsOf(keyed, summary, { offset: 0, limit: total })).run;
  }

  /**
   * The rows `window` asks of a result: the whole result when it is kept whole, else that page of it (read
   * and kept apart), none when the window holds no row. Counts the read's answer once.
   */
  private async rowsOf(keyed: KeyedRead, summary: Summary, window: RowWindow): Promise<ResultPage> {
    const { dataset, environment } = keyed;
    const total = summary.total;
    const limit = total === undefined ? 0 : Math.min(window.limit, total - window.offset);
    if (total === undefined || limit <= 0) {
      this.cache.answered(dataset.name, summary.answer);
      return { run: summary, held: total === undefined ? undefined : { offset: 0, total } };
    }
    const offset = window.offset;
    const { value, answer } = await this.cache.get(
      dataset.name,
      `${this.storeKeyOf(keyed)}:rows:${offset}:${limit}`,
      () =>
        this.inSlot(keyed.owner, async () => {
          const page = await this.engine.pageDataset(
            keyed.compiled(),
            { offset, limit },
            environment,
          );
          // The summary's columns: a page's own names could differ where the subquery renamed duplicates.
          return { result: { ...page, columns: summary.result.columns }, fields: summary.fields };
        }),
      keyed.cacheable,
      'page',
    );
    this.cache.answered(dataset.name, answer);
    return { run: value, held: { offset, total } };
  }

  private keyOf(read: ResultRead, buildId: string): ResultKey {
    const { dataset, selections, view } = read;
    const reads = this.engine.datasetReads(dataset);
    const caller = callerParts(view, reads.caller);
    return {
      buildId,
      keyText: resultKeyText(buildId, dataset.name, selections, caller),
      cacheable: reads.uncacheable === undefined,
    };
  }

  /** A read keyed on the environment it runs on. */
  private keyedOn(read: ResultRead, environment: Environment): KeyedRead {
    return { ...read, ...this.keyOf(read, environment.id), environment };
  }

  /**
   * A dataset's first rows (at most MAX_RESULT_ROWS, `truncated` past them) as a dashboard's template reads
   * them, on the environment the dashboard's render holds, through the same cache entries as the HTTP read
   * of the same dataset, selections and caller parts: a dashboard and a client reading the same figures
   * run one query. No scope check: the dataset runs as the dashboard, whose scope the caller passed
   * (docs/dashboards.md). No query slot either: the render's slot covers its queries, and a page reading
   * more datasets than a caller has query slots would otherwise refuse itself.
   */
  async rowsForDashboard(
    dataset: DatasetSpec,
    selections: SelectionValues,
    view: CallerView,
    environment: Environment,
  ): Promise<QueryResult> {
    const catalog = await this.parameters.catalog();
    const canonical = canonicalSelections(catalog, selections);
    let compiled: CompiledDataset | undefined;
    const keyed = this.keyedOn(
      {
        dataset,
        selections: canonical,
        view,
        compiled: () => (compiled ??= this.engine.compileDataset(dataset, canonical, view)),
        owner: null,
      },
      environment,
    );
    const max = this.config.maxResultRows;
    const summary = await this.summary(keyed);
    const { run } = await this.rowsOf(keyed, summary, { offset: 0, limit: max });
    const total = summary.total ?? summary.result.rows.length;
    const rows = run.result.rows.length > max ? run.result.rows.slice(0, max) : run.result.rows;
    return { ...run.result, rows, truncated: total > max };
  }

  /** Runs an uncached query in the caller's query slot, or in none for a dashboard's read. */
  private inSlot<T>(owner: string | null, work: () => Promise<T>): Promise<T> {
    return owner === null ? work() : this.slots.run('query', owner, work);
  }

  private storeKeyOf(keyed: KeyedRead): string {
    return storeKey(keyed.buildId, keyed.dataset.name, keyed.keyText);
  }

  /**
   * A result kept whole when it has at most {@link WHOLE_RESULT_ROWS} rows (read in one query under a row
   * limit, the common case), else its columns and row count: the rows it read are let go and each page is
   * read on its own, so that memory never holds a large result.
   */
  private async summary(keyed: KeyedRead): Promise<Summary> {
    const { dataset, environment } = keyed;
    const { value, answer } = await this.cache.get(
      dataset.name,
      this.storeKeyOf(keyed),
      () =>
        this.inSlot(keyed.owner, async () => {
          const compiled = keyed.compiled();
          const probe = await this.engine.runDataset(compiled, environment, WHOLE_RESULT_ROWS);
          const fields = this.fieldsOf(dataset, probe);
          if (!probe.truncated) return { result: probe, fields };
          const total = await this.engine.countDataset(compiled, environment);
          return { result: { ...probe, rows: [] }, fields, total };
        }),
      keyed.cacheable,
    );
    return { ...value, answer };
  }

  private fieldsOf(dataset: DatasetSpec, result: QueryResult): SchemaField[] {
    return schemaFields(result, findModel(this.served.current, dataset.model)?.columns);
  }
}
