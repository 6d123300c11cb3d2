import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { JsonLogger } from '@/runtime/json-logger';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { DashboardsLegacyController } from '@/dashboards/dashboards.legacy.controller';
import { DashboardsController } from '@/dashboards/dashboards.controller';
import { DashboardAssetsController } from '@/dashboards/dashboard-assets.controller';
import { DashboardsService } from '@/dashboards/dashboards.service';
import { DashboardCache } from '@/dashboards/dashboard-cache';
import { DatasetsModule } from '@/datasets/datasets.module';
import { BrowserPool } from '@/dashboards/render/browser-pool';
import { createBrowserPool } from '@/dashboards/render/render-pool.provider';
import { RendererProbe } from '@/dashboards/render/renderer-probe';
import { DashboardPages } from '@/dashboards/template/dashboard-pages';
import { MetricsModule } from '@/metrics/metrics.module';
import { MetricsService } from '@/metrics/metrics.service';
import { ParameterCatalogModule } from '@/parameter-catalog/parameter-catalog.module';
import { ServedProject } from '@/core/project/served-project';

@Module({
  // Datasets: a page reads its datasets through their results cache (DatasetsService).
  imports: [MetricsModule, ParameterCatalogModule, DatasetsModule],
  controllers: [DashboardsController, DashboardsLegacyController, DashboardAssetsController],
  providers: [
    DashboardsService,
    DashboardCache,
    // Compiled at start-up: a template that does not compile stops the service with the file and line.
    {
      provide: DashboardPages,
      inject: [ServedProject, APP_CONFIG],
      useFactory: (served: ServedProject, config: AppConfig) =>
        new DashboardPages(served.current, config.embedding.frameOrigins),
    },
    {
      provide: BrowserPool,
      inject: [APP_CONFIG, JsonLogger, MetricsService],
      useFactory: (config: AppConfig, logger: JsonLogger, metrics: MetricsService) =>
        createBrowserPool(config, logger, metrics.registry),
    },
    {
      provide: RendererProbe,
      inject: [APP_CONFIG, BrowserPool],
      useFactory: (config: AppConfig, pool: BrowserPool) => {
        const probe = new RendererProbe(config.chromiumPath, pool);
        probe.start();
        return probe;
      },
    },
  ],
  // Readiness reports the renderer's state; the MCP server renders through the service.
  exports: [RendererProbe, DashboardsService],
})
export class DashboardsModule implements OnApplicationShutdown {
  constructor(@Inject(BrowserPool) private readonly pool: BrowserPool) {}

  /** Chromium is a child process: closing it lets the process exit and leaves no orphan behind. */
  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }
}
