import { Module } from '@nestjs/common';
import { AuthModule } from '@/auth/auth.module';
import { BuildsModule } from '@/builds/builds.module';
import { HealthController } from '@/health/health.controller';
import { HealthService } from '@/health/health.service';

@Module({
  imports: [AuthModule, BuildsModule],
  controllers: [HealthController],
  providers: [HealthService],
})
export class HealthModule {}
