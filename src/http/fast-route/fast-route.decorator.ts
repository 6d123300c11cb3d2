import { SetMetadata } from '@nestjs/common';

export const FAST_ROUTE = 'drey:fast-route';

/**
 * A GET route served in front of Express' router and middleware: its handler runs through Nest's own context
 * machinery (guards, interceptors, pipes, parameter decorators, exception filters) on Node's request and
 * response. The handler returns an `HttpReply` (`http/reply/http-reply.ts`), which one writer sends on this
 * path and on Nest's alike, and takes no `@Req()` or `@Res()`. Start-up fails, naming the route and the
 * reason, on what the shortcut cannot run (`fast-route-checks.ts`); only requests it can answer so are
 * served this way, the others go to Express.
 */
export const FastRoute = (): MethodDecorator => SetMetadata(FAST_ROUTE, true);
