import { Module } from '@nestjs/common';
import { BuildsModule } from '@/builds/builds.module';
import { DashboardsModule } from '@/dashboards/dashboards.module';
import { HealthController } from '@/health/health.controller';
import { HealthService } from '@/health/health.service';
import { MetricsController } from '@/health/metrics.controller';
import { MetricsModule } from '@/metrics/metrics.module';

@Module({
  imports: [BuildsModule, DashboardsModule, MetricsModule],
  controllers: [HealthController, MetricsController],
  providers: [HealthService],
})
export class HealthModule {}
