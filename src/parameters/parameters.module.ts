import { Module } from '@nestjs/common';
import { ParameterWidgetsService } from '@/parameters/parameter-widgets.service';
import { ParametersLegacyController } from '@/parameters/parameters.legacy.controller';
import { ParametersController } from '@/parameters/parameters.controller';
import { ParametersService } from '@/parameters/parameters.service';

@Module({
  controllers: [ParametersController, ParametersLegacyController],
  providers: [ParametersService, ParameterWidgetsService],
  exports: [ParametersService],
})
export class ParametersModule {}
