import { Module } from '@nestjs/common';
import { MetricsController } from '@/health/metrics.controller';
import { MetricsService } from '@/metrics/metrics.service';

@Module({
  controllers: [MetricsController],
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {}
