import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { FastRoutes } from '@/http/fast-route/fast-routes';
import { NestReplies } from '@/http/reply/nest-replies';

/**
 * Serves the routes marked `@FastRoute()` in front of Express (`configureApp` attaches it), and has Nest's
 * Express path send an `HttpReply` with the same writer, so a fast route's handler answers alike on both.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [FastRoutes, NestReplies],
  exports: [FastRoutes],
})
export class FastRouteModule {}
