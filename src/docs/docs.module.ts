import { Module } from '@nestjs/common';
import { RedocController } from '@/docs/redoc.controller';

@Module({ controllers: [RedocController] })
export class DocsModule {}
