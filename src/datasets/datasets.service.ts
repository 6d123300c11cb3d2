import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '@/auth/caller';
import { callerView, requireScope } from '@/auth/scope';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { DatasetResultCache } from '@/datasets/dataset-result-cache';
import type { CachedRun } from '@/datasets/result-codec';
import { currentJson, legacyJson } from '@/datasets/result-json';
import {
  callerParts,
  canonicalSelections,
  etagMatches,
  etagOf,
  pageKey,
  resultKeyText,
  storeKey,
} from '@/datasets/result-keys';
import { parseResultOptions, ResultOptions } from '@/datasets/result-options';
import type { ResultReply } from '@/datasets/result-reply';
import { SchemaField, schemaFields } from '@/datasets/result-shape';
import { encodeRows, streamOptions } from '@/datasets/result-streams';
import { CONTENT_TYPES, ResultFormat } from '@/datasets/stream-formats';
import { Engine } from '@/engine/engine';
import type { Environment } from '@/engine/environment/environment';
import type { QueryResult } from '@/engine/query/query-result';
import { ParametersService } from '@/parameters/parameters.service';
import type { ParameterRequest } from '@/parameters/selection-request';
import type { CallerView, SelectionValues } from '@/parameters/selection-value';
import { findItem } from '@/project/items';
import { DatasetSpec, Project, findModel } from '@/project/project';
import { PROJECT } from '@/project/project.tokens';

/**
 * A dataset's whole result for one request's selections, with its schema fields. The result may be shared
 * with other requests through the cache: read it, never change it.
 */
export interface DatasetRun {
  dataset: DatasetSpec;
  result: QueryResult;
  fields: SchemaField[];
}

/** What the request asks of the reply besides its selections. */
export interface ReplyWants {
  format: ResultFormat;
  /** `If-None-Match` of a GET; answered with 304 when it names the result's current ETag. */
  ifNoneMatch?: string;
}

/** A request checked against the dataset's scope, with its selections validated and canonical. */
interface Resolved {
  dataset: DatasetSpec;
  selections: SelectionValues;
  view: CallerView;
}

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
  constructor(
    private readonly engine: Engine,
    private readonly parameters: ParametersService,
    private readonly cache: DatasetResultCache,
    @Inject(PROJECT) private readonly project: Project,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * `P/datasets/{dataset}/results` and the legacy `dataset/{name}`: a kept response when the same request
   * was answered on this build, else a page of the cached whole result, else one query shared by every
   * identical request running at the time. CSV and NDJSON stream every row instead (not cached).
   */
  async reply(
    caller: Caller,
    name: string,
    request: ParameterRequest,
    wants: ReplyWants,
  ): Promise<ResultReply> {
    if (wants.format !== 'json') {
      const options = streamOptions(request.layout === 'current' ? request.builtins : {});
      const resolved = await this.resolve(caller, name, request);
      return this.exportReply(resolved, wants.format, options);
    }
    const options = this.jsonOptions(request);
    const resolved = await this.resolve(caller, name, request);
    return this.withBuild(resolved, (keyed) => {
      const page = pageKey(keyed.keyText, request.layout, options);
      return Promise.resolve(
        this.keptPage(keyed, page, wants.ifNoneMatch) ??
          this.freshPage(keyed, page, options, wants.ifNoneMatch),
      );
    });
  }

  /**
   * Runs a dataset for a caller: scope check, validated selections (defaults applied), the model, through
   * the results cache; for services other than the results endpoints.
   */
  async run(caller: Caller, name: string, request: ParameterRequest): Promise<DatasetRun> {
    const resolved = await this.resolve(caller, name, request);
    const run = await this.withBuild(resolved, (keyed) => this.whole(keyed));
    return { dataset: resolved.dataset, result: run.result, fields: run.fields };
  }

  /** The paging built-ins of the current layout; the legacy layout has none (every row). */
  private jsonOptions(request: ParameterRequest): ResultOptions | null {
    return request.layout === 'current'
      ? parseResultOptions(request.builtins, this.config.maxResultRows)
      : null;
  }

  private keptPage(keyed: Keyed, page: string, ifNoneMatch?: string): ResultReply | undefined {
    if (!keyed.cacheable) return undefined;
    const kept = this.cache.page(keyed.dataset.name, page);
    if (!kept) return undefined;
    if (etagMatches(ifNoneMatch, kept.etag)) return { kind: 'not-modified', etag: kept.etag };
    return { kind: 'body', ...kept };
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
    const run = await this.whole(keyed);
    const json = options ? currentJson(run, options) : legacyJson(run);
    if (typeof json !== 'string') {
      return { kind: 'stream', contentType: CONTENT_TYPES.json, chunks: json, etag };
    }
    if (etag) this.cache.keepPage(page, { body: json, etag });
    return { kind: 'body', body: json, etag };
  }

  private async resolve(
    caller: Caller,
    name: string,
    request: ParameterRequest,
  ): Promise<Resolved> {
    const dataset = findItem(this.project, 'dataset', name, request.layout === 'legacy');
    requireScope(dataset.scope, caller, `the dataset "${dataset.name}"`);
    const catalog = await this.parameters.catalog();
    const view = callerView(caller);
    const selections = canonicalSelections(
      catalog,
      catalog.selections(dataset.parameters, request, view),
    );
    return { dataset, selections, view };
  }

  /**
   * Holds the environment being served while `work` keys and runs the request on it, so that a build
   * switching in meanwhile cannot put its rows under the previous build's key.
   */
  private async withBuild<T>(resolved: Resolved, work: (keyed: Keyed) => Promise<T>): Promise<T> {
    const lease = await this.engine.acquireEnvironment();
    try {
      const { dataset, selections, view } = resolved;
      const reads = this.engine.datasetReads(dataset.name);
      const caller = callerParts(view, reads.caller);
      const buildId = lease.environment.id;
      const keyText = resultKeyText(buildId, dataset.name, selections, caller);
      const cacheable = reads.uncacheable === undefined;
      return await work({
        ...resolved,
        buildId,
        keyText,
        cacheable,
        environment: lease.environment,
      });
    } finally {
      lease.release();
    }
  }

  private whole(keyed: Keyed): Promise<CachedRun> {
    const { dataset, selections, view, environment } = keyed;
    return this.cache.get(
      dataset.name,
      storeKey(keyed.buildId, dataset.name, keyed.keyText),
      async () => {
        const result = await this.engine.runDataset(dataset.name, selections, view, environment);
        return { result, fields: this.fieldsOf(dataset, result) };
      },
      keyed.cacheable,
    );
  }

  private exportReply(
    resolved: Resolved,
    format: 'csv' | 'ndjson',
    options: ReturnType<typeof streamOptions>,
  ): ResultReply {
    const { dataset, selections, view } = resolved;
    const batches = this.engine.streamDataset(dataset.name, selections, view);
    return {
      kind: 'stream',
      contentType: CONTENT_TYPES[format],
      filename: `${dataset.name}.${format}`,
      chunks: encodeRows(this.cache.stream(dataset.name, batches), format, options),
    };
  }

  private fieldsOf(dataset: DatasetSpec, result: QueryResult): SchemaField[] {
    return schemaFields(result, findModel(this.project, dataset.model)?.columns);
  }
}
