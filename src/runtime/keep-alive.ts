import type { Server } from 'node:http';

/**
 * How long an idle keep-alive connection is kept open: past the idle timeouts of what stands in front of
 * the service, so that the side that closes an idle connection is the proxy or the client, never Drey while
 * a request is already on its way on it. With Node's default, 5 s, a proxy or a client whose pooled
 * connection had waited about 5 s sent a request just as Drey closed it and got a reset: a 502 at a proxy,
 * "other side closed" at a fetch client (seen in the tests under load, where timers run late). 65 s
 * outlasts a cloud load balancer's usual 60 s idle timeout; the shipped HAProxy drops idle server
 * connections after its 5 s `pool-purge-delay`, and the SSO gateway's Apache reuses one for at most 60 s
 * (`ttl=60` in deploy/sso/drey-gateway.conf). A stop closes idle connections at once (runtime/shutdown.ts),
 * so the longer wait never delays one.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export function keepIdleConnections(server: Server): void {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
}
