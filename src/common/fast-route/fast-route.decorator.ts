import { SetMetadata } from '@nestjs/common';

export const FAST_ROUTE = 'drey:fast-route';

/**
 * A GET route that is found without Express' router: its requests skip the router's walk over every layer
 * and route before it, and nothing else. The app-wide middleware still runs in order, then the handler Nest
 * registered for the route, with its guards, interceptors, pipes, parameter decorators and exception
 * filters, exactly as when Express finds it. {@link FastRoutes} checks at start-up that it can serve the
 * route so, and stops the service naming the route and what it cannot run otherwise.
 */
export const FastRoute = (): MethodDecorator => SetMetadata(FAST_ROUTE, true);
