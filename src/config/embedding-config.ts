import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '@/config/config-error';
import { type Env, integer, list, text } from '@/config/env-values';

/** Embedding tokens (docs/embedding.md). */
export interface EmbeddingConfig {
  /** EMBED_SECRET: the HS256 key a host application signs its own embedding tokens with. */
  secret?: string;
  /** EMBED_PUBLIC_KEY_FILE: a PEM public key (RSA, EC or Ed25519) that host tokens may be signed for instead. */
  publicKeyFile?: string;
  /** The longest an embedding token may live, from now to its `exp`. */
  maxMinutes: number;
  /** Origins that may frame HTML dashboards (`frame-ancestors`); none when empty. */
  frameOrigins: string[];
}

export function embedding(env: Env, cwd: string): EmbeddingConfig {
  const secret = text(env, 'EMBED_SECRET');
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError('EMBED_SECRET', 'must be at least 32 characters long');
  }
  const file = text(env, 'EMBED_PUBLIC_KEY_FILE');
  const frameOrigins = list(env, 'EMBED_FRAME_ORIGINS');
  for (const origin of frameOrigins) {
    if (!/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/.test(origin)) {
      throw new ConfigError(
        'EMBED_FRAME_ORIGINS',
        `has an invalid origin "${origin.slice(0, 100)}" (scheme, host and port only)`,
      );
    }
  }
  return {
    secret,
    publicKeyFile: file === undefined ? undefined : isAbsolute(file) ? file : resolve(cwd, file),
    maxMinutes: integer(env, 'EMBED_TOKEN_MAX_MINUTES', 60, 1, 10080),
    frameOrigins,
  };
}
