import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { SHARED_RESULTS } from '@/cache/cache.module';
import type { SharedResults } from '@/cache/shared-results';
import { Outcome, TieredCache } from '@/cache/tiered-cache';
import { RENDERED_PAGE_CODEC, RenderedPage } from '@/dashboards/rendered-page';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { currentRequest } from '@/runtime/request-scope';
import { JsonLogger } from '@/runtime/json-logger';
import { MetricsService } from '@/metrics/metrics.service';

/** How a dashboard request was answered: see {@link Outcome}; `uncacheable` rendered and kept nowhere. */
export type PageAnswer = Outcome | 'uncacheable';

/**
 * Rendered dashboards (see {@link TieredCache}): this process's memory within DASHBOARD_CACHE_MEMORY_MB,
 * then Redis shared with every process (the dataset results' store and bound), with single flight so that
 * identical concurrent requests render once across processes. Each render is counted, timed and logged,
 * which is what shows a cached request rendered nothing.
 */
@Injectable()
export class DashboardCache {
  private readonly cache: TieredCache<RenderedPage>;
  private readonly answers: Counter<'dashboard' | 'outcome'>;
  private readonly renders: Counter<'dashboard'>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(SHARED_RESULTS) shared: SharedResults | null,
    metrics: MetricsService,
    private readonly logger: JsonLogger,
  ) {
    this.cache = new TieredCache(RENDERED_PAGE_CODEC, shared ?? undefined, {
      memoryBytes: config.dashboardCacheMemoryBytes,
      maxEntryBytes: config.resultCacheMaxEntryBytes,
      ttlSeconds: config.resultCacheTtlSeconds,
      // Another process's render runs its queries, then draws within the render's time limit.
      waitLimitMs: config.queryTimeoutMs + config.renderTimeoutMs + 5000,
      // DatasetResultCache warns of the same store failing, at most every 10 s.
      onStoreError: () => undefined,
    });
    this.answers = new Counter({
      name: 'drey_dashboard_cache_requests_total',
      help: 'Dashboard requests by how their page was found: memory, shared (Redis), joined (waited for an identical running render), executed (rendered), uncacheable (rendered, kept nowhere)',
      labelNames: ['dashboard', 'outcome'],
      registers: [metrics.registry],
    });
    this.renders = new Counter({
      name: 'drey_dashboard_renders_total',
      help: 'Dashboard pages rendered (their datasets read, HTML made, and a PNG drawn where the format says)',
      labelNames: ['dashboard'],
      registers: [metrics.registry],
    });
  }

  /** The page of `key`, kept or rendered once for every identical request running at the time. */
  async get(
    dashboard: string,
    key: string,
    render: () => Promise<RenderedPage>,
    cacheable: boolean,
  ): Promise<RenderedPage> {
    const { value, outcome } = await this.cache.get(
      key,
      () => this.counted(dashboard, key, render),
      cacheable,
    );
    const answer: PageAnswer = cacheable || outcome !== 'executed' ? outcome : 'uncacheable';
    this.answers.inc({ dashboard, outcome: answer });
    return value;
  }

  private async counted(
    dashboard: string,
    key: string,
    render: () => Promise<RenderedPage>,
  ): Promise<RenderedPage> {
    this.renders.inc({ dashboard });
    const started = performance.now();
    const page = await render();
    this.logger.emit('info', 'dashboard rendered', {
      requestId: currentRequest()?.requestId,
      dashboard,
      contentType: page.contentType,
      bytes: page.body.length,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      key,
    });
    return page;
  }
}
