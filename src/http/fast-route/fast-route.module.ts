import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { FastRoutes } from '@/http/fast-route/fast-routes';

/** Serves the routes marked `@FastRoute()` in front of Express; `configureApp` attaches it. */
@Module({ imports: [DiscoveryModule], providers: [FastRoutes], exports: [FastRoutes] })
export class FastRouteModule {}
