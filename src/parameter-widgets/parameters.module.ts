import { Module } from '@nestjs/common';
import { ParameterWidgetsService } from '@/parameter-widgets/parameter-widgets.service';
import { ParametersLegacyController } from '@/parameter-widgets/parameters.legacy.controller';
import { ParametersController } from '@/parameter-widgets/parameters.controller';
import { ParametersService } from '@/parameter-widgets/parameters.service';

@Module({
  controllers: [ParametersController, ParametersLegacyController],
  providers: [ParametersService, ParameterWidgetsService],
  exports: [ParametersService, ParameterWidgetsService],
})
export class ParametersModule {}
