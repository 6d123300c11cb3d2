import { Module } from '@nestjs/common';
import { ParameterWidgetsService } from '@/parameter-widgets/parameter-widgets.service';
import { ParametersLegacyController } from '@/parameter-widgets/parameters.legacy.controller';
import { ParametersController } from '@/parameter-widgets/parameters.controller';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';

@Module({
  controllers: [ParametersController, ParametersLegacyController],
  providers: [ParameterCatalogService, ParameterWidgetsService],
  exports: [ParameterCatalogService, ParameterWidgetsService],
})
export class ParameterWidgetsModule {}
