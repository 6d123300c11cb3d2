import { Module } from '@nestjs/common';
import { AuditModule } from '@/audit/audit.module';
import { EmbeddingController } from '@/embedding/embedding.controller';
import { EmbeddingService } from '@/embedding/embedding.service';
import { ParametersModule } from '@/parameter-widgets/parameters.module';

/** Embedding tokens, issued and revoked by administrators; AuthModule checks them. */
@Module({
  imports: [AuditModule, ParametersModule],
  controllers: [EmbeddingController],
  providers: [EmbeddingService],
})
export class EmbeddingModule {}
