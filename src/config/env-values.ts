import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '@/config/config-error';

/**
 * The readers of single variables, each failing with a {@link ConfigError} that names the variable and
 * the range it must be in; the sections of the configuration (config.ts and the *-config.ts beside it)
 * are made of them.
 */

/** The environment as the configuration reads it. */
export type Env = Record<string, string | undefined>;

/** A variable's value, trimmed; undefined when it is unset or blank. */
export function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A comma-separated variable's entries, each trimmed, blanks left out; empty when it is unset. */
export function list(env: Env, name: string): string[] {
  return (text(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A whole number from `min` to `max`. */
export function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

/** Megabytes as whole bytes; a fraction is allowed, so that a test can bound a cache to a few kilobytes. */
export function megabytes(env: Env, name: string, fallback: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback * 1024 * 1024;
  if (!/^\d+(\.\d+)?$/.test(raw)) {
    throw new ConfigError(name, `must be a number of megabytes such as 256 or 0.5, got "${raw}"`);
  }
  const value = Number(raw);
  if (value > max) throw new ConfigError(name, `must be between 0 and ${max}, got ${value}`);
  return Math.floor(value * 1024 * 1024);
}

/** One of `allowed`. */
export function oneOf<T extends string>(
  env: Env,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/** A URL with one of `protocols` (`postgres:`, with the colon). */
export function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

/** A path, relative ones from `cwd`. */
export function path(env: Env, name: string, fallback: string, cwd: string): string {
  const raw = text(env, name) ?? fallback;
  return isAbsolute(raw) ? raw : resolve(cwd, raw);
}
