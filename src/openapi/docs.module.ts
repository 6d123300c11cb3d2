import { Module } from '@nestjs/common';
import { RedocController } from '@/openapi/redoc.controller';
import { RootController } from '@/openapi/root.controller';

@Module({ controllers: [RedocController, RootController] })
export class DocsModule {}
