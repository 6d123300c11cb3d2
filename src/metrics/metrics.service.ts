import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DataSource } from 'typeorm';
import { asAdministrator, isSignedIn, type Caller } from '@/core/caller';
import { AuthenticationRequiredError, ForbiddenError } from '@/core/errors';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { compressions } from '@/metrics/compressions';

interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** The service's Prometheus metrics; features add theirs through {@link registry}. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    dataSource: DataSource,
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: 'drey_' });
    this.httpRequests = new Counter({
      name: 'drey_http_requests_total',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'drey_http_request_duration_seconds',
      help: 'HTTP request duration by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    new Gauge({
      name: 'drey_db_pool_connections',
      help: 'Database pool connections by state',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const pool = (dataSource.driver as unknown as { master?: PgPool }).master;
        if (!pool) return;
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
    new Counter({
      name: 'drey_compressions_total',
      help: 'Response bodies compressed, by coding and effort (body: a JSON body in hand, made once for a kept page; stream: an export or large page; asset: a documentation file, once per process)',
      labelNames: ['coding', 'effort'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [key, count] of compressions) {
          const [coding, effort] = key.split(':');
          this.inc({ coding, effort }, count);
        }
      },
    });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /** Public when METRICS_PUBLIC is set; otherwise for administrators. */
  async exposition(caller: Caller): Promise<string> {
    if (!this.config.metricsPublic) {
      if (!isSignedIn(caller)) throw new AuthenticationRequiredError();
      if (asAdministrator(caller) === null)
        throw new ForbiddenError('Metrics are for administrators');
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
