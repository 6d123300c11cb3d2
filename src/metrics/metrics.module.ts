import { Module } from '@nestjs/common';
import { MetricsService } from '@/metrics/metrics.service';

/** The registry the features add their metrics to; its route, GET /metrics, is the health room's. */
@Module({
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {}
