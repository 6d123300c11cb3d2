import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '@/core/caller';
import { callerView, requireScope } from '@/core/project/scope';
import { embedRequest } from '@/core/embedding/embed-request';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { CallerSlots, slotOwner } from '@/core/caller-slots';
import { currentRequest } from '@/runtime/request-scope';
import { KeptBody } from '@/http/reply/http-reply';
import type { Page } from '@/cache/tiered-cache';
import { ResultTooLargeError } from '@/core/errors';
import { Answer, DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import type { CachedRun } from '@/datasets/results/result-codec';
import { checkSelect, pageJson, wholeJson } from '@/datasets/results/result-json';
import {
  callerParts,
  canonicalSelections,
  etagMatches,
  etagOf,
  pageKey,
  resultKeyText,
  storeKey,
} from '@/datasets/results/result-keys';
import { parseResultOptions, ResultOptions } from '@/datasets/results/result-options';
import type { ResultReply } from '@/datasets/results/result-reply';
import { HeldRows, SchemaField, schemaFields } from '@/datasets/results/result-shape';
import { encodeRows, exportSelect } from '@/datasets/results/result-streams';
import { EXTENSIONS } from '@/engine/export/export-sql';
import type { CsvFormulas, ExportFormat } from '@/core/result-builtins';
import {
  CONTENT_TYPES,
  ResultFormat,
  chooseCsvFormulas,
  chooseFormat,
} from '@/datasets/results/stream-formats';
import type { CompiledDataset } from '@/engine/compile';
import { Engine } from '@/engine/engine';
import type { Environment } from '@/engine/environment/environment';
import type { QueryResult, RowWindow } from '@/engine/sql/query-result';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import { findItem } from '@/core/project/items';
import { DatasetSpec, Project, findModel } from '@/core/project/project';
import { ServedProject } from '@/core/project/served-project';

/**
 * How a result is answered: `paged` reads the request's x_* built-ins (x_orientation, x_select, x_limit,
 * x_offset shape a JSON page; x_select picks an export's columns); `whole` answers every row as records
 * with the schema's `dimensions`, within the cap of one response, and reads no built-in.
 */
export type ResultShape = 'paged' | 'whole';

/** What the request asks of the reply besides its selections. */
export interface ReplyWants {
  /** The format `Accept` asks for; undefined when it names none served here (a 406 without x_format). */
  format: ResultFormat | undefined;
  shape: ResultShape;
  /** `If-None-Match` of a GET; answered with 304 when it names the result's current ETag. */
  ifNoneMatch?: string;
}

/** A request checked against the dataset's scope, with its selections validated and canonical. */
interface Resolved {
  dataset: DatasetSpec;
  selections: SelectionValues;
  view: CallerView;
  /**
   * The dataset's statement for these selections, compiled at the first call and reused by every query
   * of the request (its first rows, count, page or export); a request answered from the cache compiles
   * nothing.
   */
  compiled: () => CompiledDataset;
  /**
   * Whose slots its uncached queries and exports take (see CallerSlots); null for a dashboard's read,
   * which runs within the slot of its render.
   */
  owner: string | null;
}

/**
 * Results of up to this many rows are read in one query and kept whole, so that any page of them is cut
 * from memory; larger ones are answered a page at a time. Reading that many rows costs a few milliseconds
 * and a few megabytes; a larger result's first request reads them once, before counting its rows.
 */
export const WHOLE_RESULT_ROWS = 10_000;

/** A result as the cache gave it (see {@link CachedRun}), with how it was found. */
type Summary = CachedRun & { answer: Answer };

/** A resolved request keyed on the build it is served from. */
interface Keyed extends Resolved {
  buildId: string;
  /** See {@link resultKeyText}. */
  keyText: string;
  /** False for results that must not be reused (see {@link Engine.datasetReads}). */
  cacheable: boolean;
  environment: Environment;
}

@Injectable()
export class DatasetsService {
  /** The project being served now (a build may replace it): read per use, never kept. */
  private get project(): Project {
    return this.served.current;
  }

  constructor(
    private readonly engine: Engine,
    private readonly parameters: ParameterCatalogService,
    private readonly cache: DatasetResultCache,
    private readonly served: ServedProject,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.slots = new CallerSlots(config.callerSlots);
  }

  /** Uncached queries and exports running per caller (a cached answer takes none). */
  private readonly slots: CallerSlots;

  /**
   * A dataset's result (`name` as configured): a kept response when the same request
   * was answered on this build, else a page cut from the cached result, else one query shared by every
   * identical request running at the time. A result of more than {@link WHOLE_RESULT_ROWS} rows is not
   * kept whole: its row count is, and each page is read with LIMIT/OFFSET and kept apart. CSV and NDJSON
   * stream every row instead (not cached).
   */
  async reply(
    caller: Caller,
    name: string,
    request: ParameterRequest,
    wants: ReplyWants,
  ): Promise<ResultReply> {
    // x_format wins over Accept, and names a download (Content-Disposition).
    const { format, named } = chooseFormat(request.builtins.x_format, wants.format);
    // Both layouts, whatever the format: a wrong value is a 400 wherever it is sent.
    const csvFormulas = chooseCsvFormulas(request.builtins.x_csv_formulas);
    if (format !== 'json') {
      // Every row, in the columns x_select names (decisions.md, "Results"); the legacy layout's whole
      // result reads no built-in.
      const select = exportSelect(
        wants.shape === 'paged' ? request.builtins : {},
        this.config.maxResultRows,
      );
      const resolved = await this.resolve(caller, name, request);
      return this.exportReply(resolved, format, select, csvFormulas);
    }
    const options = this.jsonOptions(request, wants.shape);
    const resolved = await this.resolve(caller, name, request);
    const reply =
      this.keptReply(resolved, wants, options) ??
      (await this.withBuild(resolved, (keyed) => {
        const page = pageKey(keyed.keyText, wants.shape, options);
        return Promise.resolve(
          this.keptPage(keyed, page, wants.ifNoneMatch) ??
            this.freshPage(keyed, page, options, wants.ifNoneMatch),
        );
      }));
    return named && reply.kind !== 'not-modified'
      ? { ...reply, filename: `${resolved.dataset.name}.json` }
      : reply;
  }

  /** The shaping and paging built-ins of a paged result; none for a whole one (every row). */
  private jsonOptions(request: ParameterRequest, shape: ResultShape): ResultOptions | null {
    return shape === 'paged'
      ? parseResultOptions(request.builtins, this.config.maxResultRows)
      : null;
  }

  /**
   * The response kept for this request on the build being served, found without holding that build (no
   * lease, no promise): a hit runs no query, so it puts no rows under any key, and it reads the build's id
   * as a lease would. Undefined on a miss, and while a build another process switched in is not followed
   * yet (then {@link withBuild} follows it). In the profile of bench/cpu-per-request.js
   * (node --cpu-prof) the cached read spent 7.1% of its busy CPU in withBuild (the lease, its promises, the
   * pointer's stat); 2.5% here.
   */
  private keptReply(
    resolved: Resolved,
    wants: ReplyWants,
    options: ResultOptions | null,
  ): ResultReply | undefined {
    const buildId = this.engine.freshBuildId();
    if (buildId === undefined) return undefined;
    const key = this.keyOf(resolved, buildId);
    if (!key.cacheable) return undefined;
    const page = pageKey(key.keyText, wants.shape, options);
    return this.keptPage({ dataset: resolved.dataset, ...key }, page, wants.ifNoneMatch);
  }

  private keptPage(
    keyed: Pick<Keyed, 'dataset' | 'cacheable'>,
    page: string,
    ifNoneMatch?: string,
  ): ResultReply | undefined {
    if (!keyed.cacheable) return undefined;
    const kept = this.cache.page(keyed.dataset.name, page);
    if (!kept) return undefined;
    if (etagMatches(ifNoneMatch, kept.etag)) return { kind: 'not-modified', etag: kept.etag };
    return { kind: 'body', body: kept.body, etag: kept.etag, kept: this.keptBody(page, kept) };
  }

  /** A kept page as the writer takes it: the compressed forms it makes are kept and counted with it. */
  private keptBody(pageKey: string, page: Page): KeptBody {
    return new KeptBody(page, 'body', () => this.cache.keepPage(pageKey, page));
  }

  private async freshPage(
    keyed: Keyed,
    page: string,
    options: ResultOptions | null,
    ifNoneMatch?: string,
  ): Promise<ResultReply> {
    // Results that may change between runs have no ETag: their next bytes may differ.
    const etag = keyed.cacheable ? etagOf(page) : undefined;
    if (etag && etagMatches(ifNoneMatch, etag)) return { kind: 'not-modified', etag };
    const json = options ? await this.pagedBody(keyed, options) : await this.wholeBody(keyed);
    if (typeof json !== 'string') {
      return { kind: 'stream', contentType: CONTENT_TYPES.json, chunks: json, etag };
    }
    if (!etag) return { kind: 'body', body: json };
    const kept: Page = { body: Buffer.from(json), etag };
    this.cache.keepPage(page, kept);
    return { kind: 'body', body: kept.body, etag, kept: this.keptBody(page, kept) };
  }

  private async pagedBody(
    keyed: Keyed,
    options: ResultOptions,
  ): Promise<string | Iterable<string>> {
    const summary = await this.summary(keyed);
    try {
      checkSelect(summary, options);
    } catch (error) {
      this.cache.answered(keyed.dataset.name, summary.answer);
      throw error;
    }
    const { run, held } = await this.rows(keyed, summary, options);
    return pageJson(run, options, held);
  }

  /**
   * Every row, within the cap of one page: a larger result is a 400 carrying its size and the cap, which
   * the layout that asked words (the legacy layout, the only one that asks for whole results, names the
   * ways to read every row).
   */
  private async wholeBody(keyed: Keyed): Promise<string | Iterable<string>> {
    const summary = await this.summary(keyed);
    const total = summary.total ?? summary.result.rows.length;
    const max = this.config.maxResultRows;
    if (total > max) {
      this.cache.answered(keyed.dataset.name, summary.answer);
      throw new ResultTooLargeError(total, max);
    }
    const { run } = await this.rows(keyed, summary, { offset: 0, limit: total });
    return wholeJson(run);
  }

  /**
   * The rows `window` asks of a result: the whole result when it is kept whole, else that page of it (read
   * and kept apart), none when the window holds no row. Counts the request's answer once.
   */
  private async rows(
    keyed: Keyed,
    summary: Summary,
    window: RowWindow,
  ): Promise<{ run: CachedRun; held?: HeldRows }> {
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
  private async resolve(
    caller: Caller,
    name: string,
    request: ParameterRequest,
  ): Promise<Resolved & { owner: string }> {
    const dataset = findItem(this.project, 'dataset', name, caller);
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
      owner: slotOwner(caller.username, currentRequest()?.address),
    };
  }

  /**
   * Holds the environment being served while `work` keys and runs the request on it, so that a build
   * switching in meanwhile cannot put its rows under the previous build's key.
   */
  private async withBuild<T>(resolved: Resolved, work: (keyed: Keyed) => Promise<T>): Promise<T> {
    const lease = await this.engine.acquireEnvironment();
    try {
      return await work(this.keyedOn(resolved, lease.environment));
    } finally {
      lease.release();
    }
  }

  /** What keys a resolved request on a build (see {@link resultKeyText}). */
  private keyOf(
    resolved: Resolved,
    buildId: string,
  ): Pick<Keyed, 'buildId' | 'keyText' | 'cacheable'> {
    const { dataset, selections, view } = resolved;
    const reads = this.engine.datasetReads(dataset);
    const caller = callerParts(view, reads.caller);
    return {
      buildId,
      keyText: resultKeyText(buildId, dataset.name, selections, caller),
      cacheable: reads.uncacheable === undefined,
    };
  }

  /** A resolved request keyed on the environment it runs on. */
  private keyedOn(resolved: Resolved, environment: Environment): Keyed {
    return { ...resolved, ...this.keyOf(resolved, environment.id), environment };
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
    const { run } = await this.rows(keyed, summary, { offset: 0, limit: max });
    const total = summary.total ?? summary.result.rows.length;
    const rows = run.result.rows.length > max ? run.result.rows.slice(0, max) : run.result.rows;
    return { ...run.result, rows, truncated: total > max };
  }

  /** Runs an uncached query in the caller's query slot, or in none for a dashboard's read. */
  private inSlot<T>(owner: string | null, work: () => Promise<T>): Promise<T> {
    return owner === null ? work() : this.slots.run('query', owner, work);
  }

  private storeKeyOf(keyed: Keyed): string {
    return storeKey(keyed.buildId, keyed.dataset.name, keyed.keyText);
  }

  /**
   * A result kept whole when it has at most {@link WHOLE_RESULT_ROWS} rows (read in one query under a row
   * limit, the common case), else its columns and row count: the rows it read are let go and each page is
   * read on its own, so that memory never holds a large result.
   */
  private async summary(keyed: Keyed): Promise<Summary> {
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

  /**
   * An export: written by DuckDB's own writers ({@link Engine.exportDataset}), or, for a dataset on an
   * external connection, CSV or NDJSON encoded from its rows. The slot is taken when the first chunk is
   * read (a refusal is still answered as a 429 then, and so is a failure while writing, in the layout's
   * shape) and held until the last one is sent or the client goes away.
   */
  private exportReply(
    resolved: Resolved & { owner: string },
    format: ExportFormat,
    select: string[],
    csvFormulas: CsvFormulas,
  ): ResultReply {
    const { dataset } = resolved;
    const compiled = resolved.compiled();
    const fromRows =
      compiled.target.kind === 'connection' && (format === 'csv' || format === 'ndjson');
    const chunks = fromRows
      ? encodeRows(this.cache.stream(dataset.name, this.engine.streamDataset(compiled)), format, {
          select,
          offset: 0,
          limit: Number.POSITIVE_INFINITY,
          csvFormulas,
        })
      : this.cache.exported(dataset.name, () =>
          this.engine.exportDataset(compiled, { format, select, name: dataset.name, csvFormulas }),
        );
    return {
      kind: 'stream',
      contentType: CONTENT_TYPES[format],
      filename: `${dataset.name}.${EXTENSIONS[format]}`,
      chunks: this.slots.stream('export', resolved.owner, chunks),
    };
  }

  private fieldsOf(dataset: DatasetSpec, result: QueryResult): SchemaField[] {
    return schemaFields(result, findModel(this.project, dataset.model)?.columns);
  }
}
