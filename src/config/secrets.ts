import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppConfig } from '@/config/config';
import { generatePassword } from '@/core/users/password-policy';

interface StoredSecrets {
  jwtSecret?: string;
  adminPassword?: string;
}

/** The secrets the service runs with: from the environment, or generated once and kept under DATA_DIR. */
export interface Secrets {
  /** Signs every token, and verifies them. */
  jwtSecret: string;
  /** Verify, never sign, tokens signed before a rotation, until `until` (JWT_PREVIOUS_SECRETS). */
  previousJwtSecrets?: { secrets: string[]; until: Date };
  adminPassword: string;
  /** Whether the admin password is ADMIN_PASSWORD (rather than one generated and kept under DATA_DIR). */
  adminPasswordFromEnvironment?: boolean;
}

/**
 * In production both secrets come from the environment (the config refuses to start otherwise). In
 * development they may be generated; they are written to `DATA_DIR/secrets.json` (mode 0600) so that a
 * restart keeps tokens and the admin password valid.
 */
export function resolveSecrets(config: AppConfig): Secrets {
  const previousJwtSecrets =
    config.jwtPreviousSecrets.length > 0 && config.jwtPreviousSecretsUntil
      ? { secrets: config.jwtPreviousSecrets, until: config.jwtPreviousSecretsUntil }
      : undefined;
  if (config.jwtSecret && config.adminPassword) {
    return {
      jwtSecret: config.jwtSecret,
      previousJwtSecrets,
      adminPassword: config.adminPassword,
      adminPasswordFromEnvironment: true,
    };
  }
  const file = join(config.dataDir, 'secrets.json');
  const stored: StoredSecrets = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as StoredSecrets)
    : {};
  let changed = false;
  if (!config.jwtSecret && !stored.jwtSecret) {
    stored.jwtSecret = randomBytes(48).toString('base64url');
    changed = true;
  }
  if (!config.adminPassword && !stored.adminPassword) {
    stored.adminPassword = generatePassword(config.passwordMinLength);
    changed = true;
  }
  if (changed) {
    mkdirSync(config.dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return {
    jwtSecret: config.jwtSecret ?? (stored.jwtSecret as string),
    previousJwtSecrets,
    adminPassword: config.adminPassword ?? (stored.adminPassword as string),
    adminPasswordFromEnvironment: config.adminPassword !== undefined,
  };
}

export const SECRETS = Symbol('SECRETS');
