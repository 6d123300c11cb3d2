import { Global, Module } from '@nestjs/common';
import { AuditController } from '@/audit/audit.controller';
import { AuditService } from '@/audit/audit.service';

@Global()
@Module({ controllers: [AuditController], providers: [AuditService], exports: [AuditService] })
export class AuditModule {}
