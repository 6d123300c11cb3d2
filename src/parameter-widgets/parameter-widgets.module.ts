import { Module } from '@nestjs/common';
import { ParameterCatalogModule } from '@/parameter-catalog/parameter-catalog.module';
import { ParameterWidgetsService } from '@/parameter-widgets/parameter-widgets.service';
import { ParametersLegacyController } from '@/parameter-widgets/parameters.legacy.controller';
import { ParametersController } from '@/parameter-widgets/parameters.controller';

/** The parameters endpoints of both layouts: the widgets of the project, a dataset or a dashboard. */
@Module({
  imports: [ParameterCatalogModule],
  controllers: [ParametersController, ParametersLegacyController],
  providers: [ParameterWidgetsService],
  exports: [ParameterWidgetsService],
})
export class ParameterWidgetsModule {}
