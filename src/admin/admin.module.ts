import { Module } from '@nestjs/common';
import { AdminController } from '@/admin/admin.controller';
import { QueryModelsService } from '@/admin/query-models.service';

@Module({ controllers: [AdminController], providers: [QueryModelsService] })
export class AdminModule {}
