import { Module } from '@nestjs/common';
import { BuildsModule } from '@/builds/builds.module';
import { DashboardsModule } from '@/dashboards/dashboards.module';
import { HealthController } from '@/health/health.controller';
import { HealthService } from '@/health/health.service';

@Module({
  imports: [BuildsModule, DashboardsModule],
  controllers: [HealthController],
  providers: [HealthService],
})
export class HealthModule {}
