import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { FastRoutes } from '@/common/fast-route/fast-routes';

/** Serves the routes marked `@FastRoute()` without Express' router walk; `configureApp` attaches it. */
@Module({ imports: [DiscoveryModule], providers: [FastRoutes], exports: [FastRoutes] })
export class FastRouteModule {}
