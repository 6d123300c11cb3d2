import { Module } from '@nestjs/common';

/** Routes and providers arrive with their issues. */
@Module({})
export class UsersModule {}
