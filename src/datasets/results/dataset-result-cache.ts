import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { SHARED_RESULTS } from '@/cache/cache.module';
import { Outcome, Page, TieredCache } from '@/cache/tiered-cache';
import type { SharedResults } from '@/cache/shared-results';
import { JsonLogger } from '@/runtime/json-logger';
import { currentRequest } from '@/runtime/request-scope';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { CACHED_RUN_CODEC, CachedRun } from '@/datasets/results/result-codec';
import type { RowBatch } from '@/engine/duckdb/duckdb-stream';
import type { WrittenExport } from '@/engine/duckdb/duckdb-export';
import { MetricsService } from '@/metrics/metrics.service';

/** How a request was answered: a kept page, or where its result came from (see {@link Outcome}). */
export type Answer = 'page' | Outcome | 'uncacheable';

/**
 * What a query computes: `result`, a result's whole rows when it is small, else its columns and row count;
 * `page`, one window of the rows of a larger result; `stream`, a CSV or NDJSON export.
 */
type QueryKind = 'result' | 'page' | 'stream';

const STORE_WARNING_EVERY_MS = 10_000;

/**
 * The dataset results cache (see {@link TieredCache}) with its metrics: how each request was answered, and
 * every query execution counted, timed and logged, which is what proves that identical concurrent
 * requests ran their query once.
 */
@Injectable()
export class DatasetResultCache {
  private readonly cache: TieredCache<CachedRun>;
  private readonly answers: Counter<'dataset' | 'outcome'>;
  private readonly executions: Counter<'dataset' | 'kind'>;
  private readonly durations: Histogram<'dataset' | 'kind'>;
  private lastStoreWarning = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(SHARED_RESULTS) shared: SharedResults | null,
    // Its registry alone: the command line builds this cache without the service's database behind
    // MetricsService (datasets-reader.ts).
    @Inject(MetricsService) metrics: Pick<MetricsService, 'registry'>,
    private readonly logger: JsonLogger,
  ) {
    this.cache = new TieredCache(CACHED_RUN_CODEC, shared ?? undefined, {
      memoryBytes: config.resultCacheMemoryBytes,
      maxEntryBytes: config.resultCacheMaxEntryBytes,
      ttlSeconds: config.resultCacheTtlSeconds,
      // Another process's query ends within its time limit; past that, something is wrong with it.
      waitLimitMs: config.queryTimeoutMs + 5000,
      onStoreError: (error) => this.storeFailed(error),
    });
    this.answers = new Counter({
      name: 'drey_result_cache_requests_total',
      help: 'Dataset result requests by how they were answered: page (a kept response), memory, shared (Redis), joined (waited for an identical running query), executed, uncacheable',
      labelNames: ['dataset', 'outcome'],
      registers: [metrics.registry],
    });
    this.executions = new Counter({
      name: 'drey_dataset_query_executions_total',
      help: 'Dataset queries run, by dataset and kind (result: whole results, or the row count of a large one; page: a page of a large result; stream: CSV and NDJSON exports)',
      labelNames: ['dataset', 'kind'],
      registers: [metrics.registry],
    });
    this.durations = new Histogram({
      name: 'drey_dataset_query_duration_seconds',
      help: 'Duration of dataset queries (for a stream, until its last row was read)',
      labelNames: ['dataset', 'kind'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [metrics.registry],
    });
  }

  /** A kept serialised response, counted as a hit. */
  page(dataset: string, pageKey: string): Page | undefined {
    const page = this.cache.page(pageKey);
    const answer: Answer = 'page';
    if (page !== undefined) this.answers.inc({ dataset, outcome: answer });
    return page;
  }

  /** A result this process keeps in memory (see {@link TieredCache.kept}); the caller counts its answer. */
  kept(key: string): CachedRun | undefined {
    return this.cache.kept(key);
  }

  keepPage(pageKey: string, page: Page): void {
    this.cache.keepPage(pageKey, page);
  }

  /**
   * The value of `key` (a result or a page of one, see {@link QueryKind}), from the cache or from one
   * execution shared by concurrent requests, with how it was found; the caller counts the answer that
   * gave the request its rows ({@link answered}), once per request.
   */
  async get(
    dataset: string,
    key: string,
    compute: () => Promise<CachedRun>,
    cacheable: boolean,
    kind: 'result' | 'page' = 'result',
  ): Promise<{ value: CachedRun; answer: Answer }> {
    const { value, outcome } = await this.cache.get(
      key,
      () => this.timed(dataset, key, compute, kind),
      cacheable,
    );
    return { value, answer: cacheable || outcome !== 'executed' ? outcome : 'uncacheable' };
  }

  answered(dataset: string, answer: Answer): void {
    this.answers.inc({ dataset, outcome: answer });
  }

  /**
   * Counts, times and logs an export DuckDB writes ({@link Engine.exportDataset}), passing its bytes on as
   * they are read; logged with its rows when the last byte is sent or the client goes away.
   */
  async *exported(
    dataset: string,
    write: () => Promise<WrittenExport>,
  ): AsyncGenerator<Uint8Array> {
    this.executions.inc({ dataset, kind: 'stream' });
    const started = performance.now();
    const written = await write();
    try {
      for await (const chunk of written.stream) yield chunk as Uint8Array;
    } finally {
      written.stream.destroy();
      const seconds = (performance.now() - started) / 1000;
      this.durations.observe({ dataset, kind: 'stream' }, seconds);
      this.logExecution(dataset, 'stream', written.rows ?? 0, seconds);
    }
  }

  /** Counts, times and logs an export's query, which runs as long as its rows are being read. */
  async *stream(dataset: string, batches: AsyncIterable<RowBatch>): AsyncGenerator<RowBatch> {
    this.executions.inc({ dataset, kind: 'stream' });
    const started = performance.now();
    const iterator = batches[Symbol.asyncIterator]();
    let rows = 0;
    try {
      for (;;) {
        // No local keeps the batch while the consumer works on it (see encodeRows).
        const step = await iterator.next();
        if (step.done) return;
        rows += step.value.rowCount;
        yield step.value;
      }
    } finally {
      await iterator.return?.();
      const seconds = (performance.now() - started) / 1000;
      this.durations.observe({ dataset, kind: 'stream' }, seconds);
      this.logExecution(dataset, 'stream', rows, seconds);
    }
  }

  private async timed(
    dataset: string,
    key: string,
    compute: () => Promise<CachedRun>,
    kind: 'result' | 'page',
  ): Promise<CachedRun> {
    this.executions.inc({ dataset, kind });
    const started = performance.now();
    const run = await compute();
    const seconds = (performance.now() - started) / 1000;
    this.durations.observe({ dataset, kind }, seconds);
    this.logExecution(dataset, kind, run.total ?? run.result.rows.length, seconds, key);
    return run;
  }

  private logExecution(
    dataset: string,
    kind: QueryKind,
    rows: number,
    seconds: number,
    key?: string,
  ): void {
    this.logger.emit('info', 'dataset query', {
      requestId: currentRequest()?.requestId,
      dataset,
      kind,
      rows,
      durationMs: Math.round(seconds * 100_000) / 100,
      key,
    });
  }

  private storeFailed(error: unknown): void {
    const now = Date.now();
    if (now - this.lastStoreWarning < STORE_WARNING_EVERY_MS) return;
    this.lastStoreWarning = now;
    this.logger.emit('warn', 'result store unavailable; running queries without it', {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
