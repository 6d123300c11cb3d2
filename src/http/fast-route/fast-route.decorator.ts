import { SetMetadata } from '@nestjs/common';

export const FAST_ROUTE = 'drey:fast-route';

/**
 * A GET route served in front of Express' router and middleware: its handler runs through Nest's own context
 * machinery (guards, interceptors, pipes, parameter decorators, exception filters) on Node's request and
 * response, and {@link FastRoutes} writes what it returns. Only requests the route can answer so are served
 * this way; start-up fails, naming the route, on what the shortcut cannot run.
 */
export const FastRoute = (): MethodDecorator => SetMetadata(FAST_ROUTE, true);
