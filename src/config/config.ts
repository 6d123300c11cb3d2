import { availableParallelism } from 'node:os';
import { allowedHosts, corsOrigins, previousSecrets } from '@/config/access-config';
import { ConfigError } from '@/config/config-error';
import { EmbeddingConfig, embedding } from '@/config/embedding-config';
import { type Env, integer, megabytes, oneOf, path, text, url } from '@/config/env-values';
import { SsoConfig, loadSsoConfig } from '@/config/sso-config';
import { OAuthConfig, oauth } from '@/config/oauth-config';
import { WebhookConfig, webhooks } from '@/config/webhook-config';
import type { LogLevel } from '@/runtime/json-logger';
import { PASSWORD_MIN_LENGTH, passwordProblem } from '@/core/users/password-policy';
import { BuildSchedule, patternProblem, zoneProblem } from '@/core/project/build-schedule';

export { ConfigError };
export type { LogLevel };

export type NodeEnv = 'development' | 'production' | 'test';

/** The service's whole configuration, read once from the environment at boot. */
export interface AppConfig {
  nodeEnv: NodeEnv;
  host: string;
  /**
   * ALLOWED_HOSTS: `Host` names a service bound to a loopback address answers besides localhost, 127.0.0.1,
   * [::1] and its own address (http/request/host-rule.ts), lower-case, without port. Empty when unset.
   */
  allowedHosts: string[];
  port: number;
  projectDir: string;
  /** Postgres URL; undefined means the embedded PGlite database under `dataDir`. */
  databaseUrl?: string;
  /** How long start-up waits for a DATABASE_URL server that cannot be reached yet. */
  databaseWaitMs: number;
  /** Redis URL; undefined means the in-process queue and caches. */
  redisUrl?: string;
  /** Namespace of every Redis key (queues, caches), so several deployments can share one Redis. */
  redisPrefix: string;
  /**
   * `DATA_DIR`. When it is not set, the default `.data` until the project is known, then `.data/<project
   * name>` ({@link withProjectDataDir}): two projects run from one checkout keep apart.
   */
  dataDir: string;
  /** True while `dataDir` is the default's parent, to be completed with the project's name. */
  dataDirPerProject: boolean;
  /** Undefined in development means "generate once and persist under dataDir". */
  jwtSecret?: string;
  /**
   * Secrets tokens were signed with before JWT_SECRET, still accepted (never used to sign) until
   * `jwtPreviousSecretsUntil`: a rotation that signs nobody out. Empty when none.
   */
  jwtPreviousSecrets: string[];
  /** When the previous secrets stop being accepted; set whenever `jwtPreviousSecrets` is not empty. */
  jwtPreviousSecretsUntil?: Date;
  adminPassword?: string;
  tokenExpireMinutes: number;
  maxResultRows: number;
  /** The token `drey mcp` signs in with (DREY_TOKEN): a named token of the service's users. */
  mcpToken?: string;
  /** Rows a tool of the MCP server answers when it is not told (`limit`), and the most it answers. */
  mcpRows: { default: number; max: number };
  /**
   * MCP_ANONYMOUS: with an authorization server (Drey's, or the identity provider's), a request to the MCP
   * endpoint without a credential is still served the public items, rather than answered 401 with the
   * challenge that tells an assistant where to sign in. Without one, anonymous callers are served anyway.
   */
  mcpAnonymous: boolean;
  /** Minutes a link of the `dataset_export` tool stays valid (MCP_EXPORT_LINK_MINUTES). */
  mcpExportLinkMinutes: number;
  /** The largest HTML page the `dashboard` tool answers as text, in bytes (MCP_DASHBOARD_HTML_MAX_BYTES). */
  mcpDashboardHtmlMaxBytes: number;
  /** Time limit of one dataset or query-models query. */
  queryTimeoutMs: number;
  /** What each DuckDB database (the one served, a build's) may use: the engine's `EngineLimits`. */
  engine: {
    /** Memory, in MB; a query that needs more is stopped with `query_too_large`. */
    memoryLimitMb: number;
    /** Threads a query runs on. */
    threads: number;
    /** Disk a query may spill to beyond memory, in MB; 0: none. */
    tempLimitMb: number;
    /** Disk that exports being written and sent may take together, in MB. */
    exportLimitMb: number;
  };
  /**
   * The nice value of the server's threads other than the event loop's (runtime/background-threads.ts),
   * 0 to 19; 0 leaves them as they are.
   */
  backgroundThreadNice: number;
  /** Bytes of dataset results (and their serialised pages) kept in each process's memory; 0 keeps none. */
  resultCacheMemoryBytes: number;
  /** Bytes of rendered dashboards (HTML and PNG) kept in each process's memory; 0 keeps none. */
  dashboardCacheMemoryBytes: number;
  /** Results bigger than this are not cached (they still run once for concurrent identical requests). */
  resultCacheMaxEntryBytes: number;
  /** Lifetime of a result in Redis: only reclaims space, since a new build changes every key. */
  resultCacheTtlSeconds: number;
  /** Bytes of results kept in Redis, all processes together; past it the least recently used go. 0: none. */
  resultCacheRedisBytes: number;
  /** The environment, for the variables a project's connections name (`url_env`). */
  connectionEnv: Record<string, string | undefined>;
  chromiumPath: string;
  /** Chromium pages kept for PNG dashboards: at most this many render at once. */
  renderPages: number;
  /** PNG renders that may wait for a page; beyond it a render is refused with 503. */
  renderQueue: number;
  /** Time limit of one PNG render, once it has a page. */
  renderTimeoutMs: number;
  /** Uncached queries, exports and dashboard renders one caller may run at once (then 429). */
  callerSlots: { query: number; export: number; render: number };
  logLevel: LogLevel;
  corsOrigins: string[];
  loginMaxFailures: number;
  loginMaxFailuresPerAddress: number;
  loginWindowSeconds: number;
  /** The shortest password accepted wherever one is set (API, CLI, ADMIN_PASSWORD). */
  passwordMinLength: number;
  shutdownTimeoutMs: number;
  /** `/metrics` without a token; otherwise administrators only. */
  metricsPublic: boolean;
  sso: SsoConfig;
  /**
   * BUILD_SCHEDULE: the schedule that replaces the project's `build.schedule`; `off` runs none whatever the
   * project says; undefined follows the project.
   */
  buildSchedule?: BuildSchedule | 'off';
  /** Where build events are sent, signed; none when `urls` is empty. */
  webhooks: WebhookConfig;
  embedding: EmbeddingConfig;
  oauth: OAuthConfig;
}

/** Where state lives when DATA_DIR is not set: a folder per project under it. */
export const DEFAULT_DATA_DIR = '.data';

function redisPrefix(env: Env): string {
  const raw = text(env, 'REDIS_PREFIX') ?? 'drey';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(raw)) {
    throw new ConfigError('REDIS_PREFIX', 'must be 1-64 letters, digits, ".", "_" or "-"');
  }
  return raw;
}

function buildSchedule(env: Env): BuildSchedule | 'off' | undefined {
  const pattern = text(env, 'BUILD_SCHEDULE');
  const timezone = text(env, 'BUILD_SCHEDULE_TIMEZONE') ?? 'UTC';
  const badZone = zoneProblem(timezone);
  if (badZone) throw new ConfigError('BUILD_SCHEDULE_TIMEZONE', badZone);
  if (pattern === undefined || pattern === 'off') return pattern;
  const badPattern = patternProblem(pattern, timezone);
  if (badPattern) throw new ConfigError('BUILD_SCHEDULE', `${badPattern} (or "off")`);
  return { pattern, timezone };
}

/** Values that examples put where a secret goes; nobody means them in production. */
const PLACEHOLDER_SECRETS = new Set(['change-me', 'changeme']);

/**
 * The secrets a deployment sets, and that a copied example may leave as they were: POSTGRES_PASSWORD is
 * docker-compose's (the bundled Postgres's, which `env_file` hands to the replicas too), the others Drey's.
 */
const SECRET_VARIABLES = [
  'ADMIN_PASSWORD',
  'JWT_SECRET',
  'POSTGRES_PASSWORD',
  'SSO_HEADER_SECRET',
  'EMBED_SECRET',
  'OIDC_CLIENT_SECRET',
];

/**
 * In production a secret still set to an example's placeholder (`change-me`) stops the start, naming the
 * variable: a service that starts anyway is one whose database or admin password anyone who read the
 * example knows. The password of DATABASE_URL counts too (compose builds it from POSTGRES_PASSWORD).
 */
function refusePlaceholderSecrets(env: Env): void {
  const placeholder = (value: string | undefined) =>
    value !== undefined && PLACEHOLDER_SECRETS.has(value.trim().toLowerCase());
  for (const variable of SECRET_VARIABLES) {
    const value = text(env, variable);
    if (placeholder(value)) {
      throw new ConfigError(
        variable,
        `is still "${value}", an example's placeholder: set a secret of your own (NODE_ENV=production)`,
      );
    }
  }
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl === undefined) return;
  let password: string;
  try {
    password = decodeURIComponent(new URL(databaseUrl).password);
  } catch {
    return; // Not a URL: url() says so, naming the variable.
  }
  if (placeholder(password)) {
    throw new ConfigError(
      'DATABASE_URL',
      `has the password "${password}", an example's placeholder: set a password of your own ` +
        '(with docker-compose, POSTGRES_PASSWORD in .env; NODE_ENV=production)',
    );
  }
}

/**
 * Reads and validates the environment. Pure: takes the environment and the working directory, so it is
 * unit-tested without touching `process.env`. Throws {@link ConfigError} on the first bad value.
 */
export function loadConfig(env: Env, cwd = process.cwd()): AppConfig {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'], 'development');
  const jwtSecret = text(env, 'JWT_SECRET');
  const adminPassword = text(env, 'ADMIN_PASSWORD');
  if (nodeEnv === 'production') {
    if (!jwtSecret) throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
    if (!adminPassword) {
      throw new ConfigError('ADMIN_PASSWORD', 'is required when NODE_ENV=production');
    }
  }
  if (nodeEnv === 'production') refusePlaceholderSecrets(env);
  if (jwtSecret !== undefined && jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters long');
  }
  const passwordMinLength = integer(
    env,
    'PASSWORD_MIN_LENGTH',
    PASSWORD_MIN_LENGTH.default,
    PASSWORD_MIN_LENGTH.lowest,
    PASSWORD_MIN_LENGTH.highest,
  );
  // The admin's password follows the policy of every other password.
  const adminPasswordProblem =
    adminPassword === undefined ? undefined : passwordProblem(adminPassword, passwordMinLength);
  if (adminPasswordProblem) throw new ConfigError('ADMIN_PASSWORD', adminPasswordProblem);
  const host = text(env, 'HOST') ?? '127.0.0.1';
  return {
    nodeEnv,
    host,
    allowedHosts: allowedHosts(env, host),
    port: integer(env, 'PORT', 4465, 0, 65535),
    projectDir: path(env, 'PROJECT_DIR', 'examples/expenses', cwd),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseWaitMs: integer(env, 'DATABASE_WAIT_SECONDS', 60, 0, 3600) * 1000,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: redisPrefix(env),
    dataDir: path(env, 'DATA_DIR', DEFAULT_DATA_DIR, cwd),
    dataDirPerProject: text(env, 'DATA_DIR') === undefined,
    jwtSecret,
    ...previousSecrets(env, jwtSecret),
    adminPassword,
    tokenExpireMinutes: integer(env, 'TOKEN_EXPIRE_MINUTES', 30, 1, 525600),
    maxResultRows: integer(env, 'MAX_RESULT_ROWS', 100000, 1, 100_000_000),
    mcpRows: mcpRows(env),
    mcpAnonymous: oneOf(env, 'MCP_ANONYMOUS', ['true', 'false'], 'false') === 'true',
    // Short-lived: whoever holds a link fetches the export, and a link lands in chats and histories.
    mcpExportLinkMinutes: integer(env, 'MCP_EXPORT_LINK_MINUTES', 5, 1, 60),
    // What an assistant can take in one answer; 64 KB is a dashboard's page without Chart.js many times over.
    mcpDashboardHtmlMaxBytes: integer(env, 'MCP_DASHBOARD_HTML_MAX_BYTES', 65536, 1024, 10_485_760),
    mcpToken: text(env, 'DREY_TOKEN'),
    queryTimeoutMs: integer(env, 'QUERY_TIMEOUT_MS', 30000, 100, 3_600_000),
    engine: {
      memoryLimitMb: integer(env, 'ENGINE_MEMORY_LIMIT_MB', 1024, 64, 1_048_576),
      // 2, or 1 for a process that may use one CPU only (engine/duckdb/duckdb-instance.ts, DEFAULT_THREADS).
      threads: integer(env, 'ENGINE_THREADS', Math.min(2, availableParallelism()), 1, 256),
      tempLimitMb: integer(env, 'ENGINE_TEMP_LIMIT_MB', 1024, 0, 10_485_760),
      exportLimitMb: integer(env, 'ENGINE_EXPORT_LIMIT_MB', 2048, 1, 10_485_760),
    },
    backgroundThreadNice: integer(env, 'BACKGROUND_THREAD_NICE', 10, 0, 19),
    resultCacheMemoryBytes: integer(env, 'RESULT_CACHE_MEMORY_MB', 64, 0, 65_536) * 1024 * 1024,
    dashboardCacheMemoryBytes:
      integer(env, 'DASHBOARD_CACHE_MEMORY_MB', 32, 0, 65_536) * 1024 * 1024,
    resultCacheMaxEntryBytes: integer(env, 'RESULT_CACHE_MAX_ENTRY_MB', 16, 1, 512) * 1024 * 1024,
    resultCacheTtlSeconds: integer(env, 'RESULT_CACHE_TTL_SECONDS', 86400, 1, 31_536_000),
    resultCacheRedisBytes: megabytes(env, 'RESULT_CACHE_REDIS_MB', 256, 65_536),
    connectionEnv: env,
    chromiumPath: text(env, 'CHROMIUM_PATH') ?? '/usr/bin/chromium',
    renderPages: integer(env, 'RENDER_PAGES', 2, 1, 64),
    renderQueue: integer(env, 'RENDER_QUEUE', 50, 0, 10_000),
    callerSlots: {
      query: integer(env, 'CALLER_MAX_QUERIES', 8, 1, 10_000),
      export: integer(env, 'CALLER_MAX_EXPORTS', 4, 1, 10_000),
      render: integer(env, 'CALLER_MAX_RENDERS', 4, 1, 10_000),
    },
    renderTimeoutMs: integer(env, 'RENDER_TIMEOUT_MS', 15000, 500, 600_000),
    logLevel: oneOf(env, 'LOG_LEVEL', ['error', 'warn', 'info', 'debug'], 'info'),
    corsOrigins: corsOrigins(env),
    loginMaxFailures: integer(env, 'LOGIN_MAX_FAILURES', 5, 1, 1000),
    loginMaxFailuresPerAddress: integer(env, 'LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1, 100000),
    loginWindowSeconds: integer(env, 'LOGIN_WINDOW_SECONDS', 300, 1, 86400),
    passwordMinLength,
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 4000, 0, 600_000),
    metricsPublic: oneOf(env, 'METRICS_PUBLIC', ['true', 'false'], 'false') === 'true',
    sso: loadSsoConfig(env),
    buildSchedule: buildSchedule(env),
    webhooks: webhooks(env),
    embedding: embedding(env, cwd),
    oauth: oauth(env),
  };
}

/**
 * An assistant reads what a tool answers into its context: a few rows by default, at most a hundred
 * (squirrels caps its tool at 100 rows for AI use). At most 1000, which keeps a page of rows far below
 * the size a dataset page is written in pieces (WHOLE_PAGE_ROWS).
 */
function mcpRows(env: Env): AppConfig['mcpRows'] {
  const max = integer(env, 'MCP_MAX_ROWS', 100, 1, 1000);
  const fallback = integer(env, 'MCP_DEFAULT_ROWS', Math.min(10, max), 1, 1000);
  if (fallback > max) {
    throw new ConfigError(
      'MCP_DEFAULT_ROWS',
      `must be at most MCP_MAX_ROWS (${max}), got ${fallback}`,
    );
  }
  return { default: fallback, max };
}

/** Injection token of {@link AppConfig}. */
export const APP_CONFIG = Symbol('APP_CONFIG');
