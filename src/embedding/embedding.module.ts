import { Module } from '@nestjs/common';
import { AuditModule } from '@/audit/audit.module';
import { EmbeddingController } from '@/embedding/embedding.controller';
import { EmbeddingService } from '@/embedding/embedding.service';
import { ParameterWidgetsModule } from '@/parameter-widgets/parameter-widgets.module';

/** Embedding tokens, issued and revoked by administrators; AuthModule checks them. */
@Module({
  imports: [AuditModule, ParameterWidgetsModule],
  controllers: [EmbeddingController],
  providers: [EmbeddingService],
})
export class EmbeddingModule {}
