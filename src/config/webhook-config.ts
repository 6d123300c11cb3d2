import { ConfigError } from '@/config/config-error';
import { type Env, integer, list, text } from '@/config/env-values';

export interface WebhookConfig {
  urls: string[];
  /** The Standard Webhooks secret (`whsec_` and base64), set whenever `urls` is not empty. */
  secret?: string;
  /** Attempts of one delivery, the first included, before it is recorded as failed. */
  maxAttempts: number;
  /** The wait before the second attempt; each next one waits twice as long. */
  retryBaseMs: number;
  /** How long one attempt waits for the endpoint's answer. */
  timeoutMs: number;
}

// The secret's form is the Standard Webhooks one, which receivers' libraries take as it is.
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

export function webhooks(env: Env): WebhookConfig {
  const urls = list(env, 'WEBHOOK_URLS');
  urls.forEach((entry, index) => {
    const which = `entry ${index + 1} of ${urls.length}`;
    let parsed: URL;
    try {
      parsed = new URL(entry);
    } catch {
      throw new ConfigError('WEBHOOK_URLS', `${which} is not a valid URL`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new ConfigError('WEBHOOK_URLS', `${which} must use http: or https:`);
    }
    if (parsed.username || parsed.password) {
      throw new ConfigError('WEBHOOK_URLS', `${which} must not carry credentials`);
    }
  });
  const secret = text(env, 'WEBHOOK_SECRET');
  if (urls.length > 0 && secret === undefined) {
    throw new ConfigError(
      'WEBHOOK_SECRET',
      'is required with WEBHOOK_URLS: receivers check each event by it (make one with ' +
        '`echo whsec_$(openssl rand -base64 32)`)',
    );
  }
  if (secret !== undefined && !WEBHOOK_SECRET.test(secret)) {
    throw new ConfigError(
      'WEBHOOK_SECRET',
      'must be "whsec_" followed by at least 24 bytes in base64 (`echo whsec_$(openssl rand -base64 32)`)',
    );
  }
  return {
    urls,
    secret,
    maxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', 10, 1, 100),
    retryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 5000, 10, 3_600_000),
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10000, 100, 120_000),
  };
}
