import { Module } from '@nestjs/common';
import { RedocController } from '@/docs/redoc.controller';
import { RootController } from '@/docs/root.controller';

@Module({ controllers: [RedocController, RootController] })
export class DocsModule {}
