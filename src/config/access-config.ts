import { isIP } from 'node:net';
import { ConfigError } from '@/config/config-error';
import { type Env, list, text } from '@/config/env-values';
import { isLoopbackHost } from '@/config/loopback';

/** Who may reach the service and stay signed in: allowed hosts, CORS origins, previous JWT secrets. */

// A date and a time with its zone (`Z` or an offset): a bare local time would depend on the machine's zone.
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether the date of `YYYY-MM-DD...` exists: Date.parse reads February 30 as March 2. */
function realDay(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}

/**
 * JWT_PREVIOUS_SECRETS (comma-separated, each as long as JWT_SECRET must be, none of them JWT_SECRET) and
 * JWT_PREVIOUS_SECRETS_UNTIL, required with them: no previous secret is accepted for ever by accident.
 * Problems name an entry by its position, never its value.
 */
export function previousSecrets(
  env: Env,
  jwtSecret: string | undefined,
): { jwtPreviousSecrets: string[]; jwtPreviousSecretsUntil?: Date } {
  const name = 'JWT_PREVIOUS_SECRETS';
  const secrets = list(env, name);
  secrets.forEach((secret, index) => {
    const which = `entry ${index + 1} of ${secrets.length}`;
    if (secret.length < 32)
      throw new ConfigError(name, `${which} must be at least 32 characters long`);
    if (secret === jwtSecret) throw new ConfigError(name, `${which} is JWT_SECRET itself`);
    if (secrets.indexOf(secret) !== index) throw new ConfigError(name, `${which} is listed twice`);
  });
  if (secrets.length === 0) return { jwtPreviousSecrets: [] };
  const until = text(env, 'JWT_PREVIOUS_SECRETS_UNTIL');
  if (until === undefined) {
    throw new ConfigError(
      'JWT_PREVIOUS_SECRETS_UNTIL',
      'is required with JWT_PREVIOUS_SECRETS: the time they stop being accepted (e.g. 2026-12-01T12:00:00Z)',
    );
  }
  const time = Date.parse(until);
  if (!INSTANT.test(until) || Number.isNaN(time) || !realDay(until)) {
    throw new ConfigError(
      'JWT_PREVIOUS_SECRETS_UNTIL',
      `must be a date and time with its zone, e.g. 2026-12-01T12:00:00Z, got "${until}"`,
    );
  }
  return { jwtPreviousSecrets: secrets, jwtPreviousSecretsUntil: new Date(time) };
}

// A DNS name (or an IPv4 address) by RFC 1123's letters, or an IPv6 address in brackets, as `Host` carries it.
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * ALLOWED_HOSTS: names only (any port is taken, as for the loopback names), read where the rule applies. Set
 * beside a HOST that is not loopback it would protect nothing, so it is refused rather than ignored.
 */
export function allowedHosts(env: Env, host: string): string[] {
  const names = list(env, 'ALLOWED_HOSTS').map((name) => name.toLowerCase());
  for (const name of names) {
    const bracketed = /^\[(.*)\]$/.exec(name)?.[1];
    if (bracketed === undefined ? !HOST_NAME.test(name) : isIP(bracketed) !== 6) {
      throw new ConfigError(
        'ALLOWED_HOSTS',
        `has an invalid name "${name.slice(0, 100)}" (a host name, an IPv4 address or an IPv6 one in brackets, without port)`,
      );
    }
  }
  if (names.length > 0 && !isLoopbackHost(host)) {
    throw new ConfigError(
      'ALLOWED_HOSTS',
      `applies to a service bound to a loopback address only; HOST=${host} answers any Host (the proxy in front checks names)`,
    );
  }
  return names;
}

/** CORS_ORIGINS: `*`, or origins of a scheme and a host, each checked. */
export function corsOrigins(env: Env): string[] {
  const origins = list(env, 'CORS_ORIGINS');
  for (const origin of origins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError('CORS_ORIGINS', `has an invalid origin "${origin}"`);
    }
  }
  return origins;
}
