import { execSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig } from '@/config/config';

const CWD = '/srv/drey';
const UNTIL = '2026-12-01T12:00:00Z';
const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_SECRET: 'x'.repeat(32),
  ADMIN_PASSWORD: 'a password of its own',
};

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({}, CWD);
    expect(config).toMatchObject({
      nodeEnv: 'development',
      host: '127.0.0.1',
      allowedHosts: [],
      port: 4465,
      projectDir: '/srv/drey/examples/expenses',
      databaseUrl: undefined,
      redisUrl: undefined,
      redisPrefix: 'drey',
      dataDir: '/srv/drey/.data',
      tokenExpireMinutes: 30,
      maxResultRows: 100000,
      mcpRows: { default: 10, max: 100 },
      mcpExportLinkMinutes: 5,
      mcpDashboardHtmlMaxBytes: 65536,
      chromiumPath: '/usr/bin/chromium',
      logLevel: 'info',
      corsOrigins: [],
      loginMaxFailures: 5,
      loginMaxFailuresPerAddress: 20,
      loginWindowSeconds: 300,
      resultCacheRedisBytes: 256 * 1024 * 1024,
      queryTimeoutMs: 30000,
      engine: {
        memoryLimitMb: 1024,
        threads: Math.min(2, availableParallelism()),
        tempLimitMb: 1024,
      },
    });
  });

  it('reads RESULT_CACHE_REDIS_MB in megabytes, fractions and 0 included', () => {
    const bytes = (value: string) =>
      loadConfig({ RESULT_CACHE_REDIS_MB: value }, CWD).resultCacheRedisBytes;
    expect(bytes('1')).toBe(1024 * 1024);
    expect(bytes('0.05')).toBe(52428);
    expect(bytes('0')).toBe(0);
  });

  it('reads the engine limits', () => {
    expect(
      loadConfig(
        { ENGINE_MEMORY_LIMIT_MB: '256', ENGINE_THREADS: '1', ENGINE_TEMP_LIMIT_MB: '0' },
        CWD,
      ),
    ).toMatchObject({ engine: { memoryLimitMb: 256, threads: 1, tempLimitMb: 0 } });
  });

  it('reads every variable', () => {
    const config = loadConfig(
      {
        NODE_ENV: 'production',
        HOST: '0.0.0.0',
        PORT: '8080',
        PROJECT_DIR: '/projects/sales',
        DATABASE_URL: 'postgres://u:p@db:5432/drey',
        REDIS_URL: 'redis://cache:6379/2',
        DATA_DIR: 'state',
        JWT_SECRET: 'x'.repeat(32),
        ADMIN_PASSWORD: 'correct horse',
        TOKEN_EXPIRE_MINUTES: '60',
        MAX_RESULT_ROWS: '500',
        CHROMIUM_PATH: '/opt/chrome',
        LOG_LEVEL: 'debug',
        CORS_ORIGINS: 'https://a.example, http://localhost:3000',
        PASSWORD_MIN_LENGTH: '12',
      },
      CWD,
    );
    expect(config).toMatchObject({
      nodeEnv: 'production',
      host: '0.0.0.0',
      port: 8080,
      projectDir: '/projects/sales',
      databaseUrl: 'postgres://u:p@db:5432/drey',
      redisUrl: 'redis://cache:6379/2',
      dataDir: '/srv/drey/state',
      tokenExpireMinutes: 60,
      maxResultRows: 500,
      chromiumPath: '/opt/chrome',
      logLevel: 'debug',
      corsOrigins: ['https://a.example', 'http://localhost:3000'],
      passwordMinLength: 12,
    });
  });

  it('reads ALLOWED_HOSTS beside a loopback HOST, lower-cased', () => {
    const names = 'Drey.Internal, 10.0.0.7, [FE80::1], my-box';
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1']) {
      expect(loadConfig({ HOST: host, ALLOWED_HOSTS: names }, CWD).allowedHosts).toEqual([
        'drey.internal',
        '10.0.0.7',
        '[fe80::1]',
        'my-box',
      ]);
    }
    expect(loadConfig({ HOST: '0.0.0.0', ALLOWED_HOSTS: ' ' }, CWD).allowedHosts).toEqual([]);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: ' ' }, CWD)).toMatchObject({
      databaseUrl: undefined,
      port: 4465,
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT must be a whole number, got "abc"'],
    [{ PORT: '70000' }, 'Invalid configuration: PORT must be between 0 and 65535, got 70000'],
    [{ TOKEN_EXPIRE_MINUTES: '0' }, 'TOKEN_EXPIRE_MINUTES must be between 1'],
    [{ MAX_RESULT_ROWS: '1.5' }, 'MAX_RESULT_ROWS must be a whole number'],
    [{ MCP_MAX_ROWS: '1001' }, 'MCP_MAX_ROWS must be between 1 and 1000, got 1001'],
    [{ MCP_DEFAULT_ROWS: '0' }, 'MCP_DEFAULT_ROWS must be between 1 and 1000, got 0'],
    // A link whoever holds downloads with: an hour at most.
    [{ MCP_EXPORT_LINK_MINUTES: '61' }, 'MCP_EXPORT_LINK_MINUTES must be between 1 and 60, got 61'],
    [{ MCP_EXPORT_LINK_MINUTES: '0' }, 'MCP_EXPORT_LINK_MINUTES must be between 1 and 60, got 0'],
    [
      { MCP_DASHBOARD_HTML_MAX_BYTES: '1023' },
      'MCP_DASHBOARD_HTML_MAX_BYTES must be between 1024 and 10485760, got 1023',
    ],
    [
      { MCP_MAX_ROWS: '20', MCP_DEFAULT_ROWS: '50' },
      'MCP_DEFAULT_ROWS must be at most MCP_MAX_ROWS (20), got 50',
    ],
    [{ DATABASE_URL: 'mysql://db/x' }, 'DATABASE_URL must use postgres: or postgresql:'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL is not a valid URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL must use redis: or rediss:'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of error, warn, info, debug'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be one of development, production, test'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET must be at least 32 characters long'],
    [{ ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD must be at least 8 characters long'],
    [
      { ADMIN_PASSWORD: 'eleven-char', PASSWORD_MIN_LENGTH: '12' },
      'ADMIN_PASSWORD must be at least 12 characters long (PASSWORD_MIN_LENGTH)',
    ],
    [{ PASSWORD_MIN_LENGTH: '0' }, 'PASSWORD_MIN_LENGTH must be between 1 and 128, got 0'],
    [{ PASSWORD_MIN_LENGTH: 'eight' }, 'PASSWORD_MIN_LENGTH must be a whole number'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET is required when NODE_ENV=production'],
    [{ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }, 'ADMIN_PASSWORD is required'],
    ...['ADMIN_PASSWORD', 'POSTGRES_PASSWORD', 'SSO_HEADER_SECRET', 'OIDC_CLIENT_SECRET'].map(
      (variable) => [
        { ...PRODUCTION, [variable]: 'change-me' },
        `${variable} is still "change-me", an example's placeholder: set a secret of your own`,
      ],
    ),
    [
      { ...PRODUCTION, DATABASE_URL: 'postgres://drey:change-me@postgres:5432/drey' },
      'DATABASE_URL has the password "change-me", an example\'s placeholder',
    ],
    [{ CORS_ORIGINS: 'example.com' }, 'CORS_ORIGINS has an invalid origin "example.com"'],
    ...[
      'drey.example:4465',
      'http://drey.example',
      '*',
      '*.example',
      'a_b.example',
      '[::1',
      '[nope]',
    ].map((name) => [{ ALLOWED_HOSTS: name }, 'ALLOWED_HOSTS has an invalid name']),
    [
      { HOST: '0.0.0.0', ALLOWED_HOSTS: 'drey.example' },
      'ALLOWED_HOSTS applies to a service bound to a loopback address only; HOST=0.0.0.0',
    ],
    [{ BUILD_SCHEDULE: '* * *' }, 'BUILD_SCHEDULE must be a cron pattern of five fields'],
    [{ BUILD_SCHEDULE: '0 25 * * *' }, 'BUILD_SCHEDULE is not a cron pattern'],
    [{ BUILD_SCHEDULE_TIMEZONE: 'Mars/Base' }, 'BUILD_SCHEDULE_TIMEZONE must be a time zone'],
    [{ WEBHOOK_URLS: 'http://127.0.0.1:1/x' }, 'WEBHOOK_SECRET is required with WEBHOOK_URLS'],
    [{ WEBHOOK_URLS: 'ftp://host/x' }, 'WEBHOOK_URLS entry 1 of 1 must use http: or https:'],
    [{ WEBHOOK_URLS: 'https://a/x,nope' }, 'WEBHOOK_URLS entry 2 of 2 is not a valid URL'],
    [{ WEBHOOK_URLS: 'https://u:p@a/x' }, 'WEBHOOK_URLS entry 1 of 1 must not carry credentials'],
    [{ WEBHOOK_SECRET: 'plain-secret' }, 'WEBHOOK_SECRET must be "whsec_"'],
    [{ EMBED_SECRET: 'short' }, 'EMBED_SECRET must be at least 32 characters long'],
    [
      { EMBED_FRAME_ORIGINS: 'https://a.example/path' },
      'EMBED_FRAME_ORIGINS has an invalid origin',
    ],
    [{ EMBED_TOKEN_MAX_MINUTES: '0' }, 'EMBED_TOKEN_MAX_MINUTES must be between 1 and 10080'],
    [{ REDIS_PREFIX: 'a b' }, 'REDIS_PREFIX must be'],
    [{ RESULT_CACHE_REDIS_MB: '-1' }, 'RESULT_CACHE_REDIS_MB must be a number of megabytes'],
    [{ RESULT_CACHE_REDIS_MB: '1e3' }, 'RESULT_CACHE_REDIS_MB must be a number of megabytes'],
    [{ RESULT_CACHE_REDIS_MB: '.5' }, 'RESULT_CACHE_REDIS_MB must be a number of megabytes'],
    [{ RESULT_CACHE_REDIS_MB: '70000' }, 'RESULT_CACHE_REDIS_MB must be between 0 and 65536'],
    [
      { JWT_PREVIOUS_SECRETS: `${'p'.repeat(32)},short`, JWT_PREVIOUS_SECRETS_UNTIL: UNTIL },
      'JWT_PREVIOUS_SECRETS entry 2 of 2 must be at least 32 characters long',
    ],
    [
      {
        JWT_SECRET: 'x'.repeat(32),
        JWT_PREVIOUS_SECRETS: 'x'.repeat(32),
        JWT_PREVIOUS_SECRETS_UNTIL: UNTIL,
      },
      'JWT_PREVIOUS_SECRETS entry 1 of 1 is JWT_SECRET itself',
    ],
    [
      {
        JWT_PREVIOUS_SECRETS: `${'p'.repeat(32)},${'p'.repeat(32)}`,
        JWT_PREVIOUS_SECRETS_UNTIL: UNTIL,
      },
      'JWT_PREVIOUS_SECRETS entry 2 of 2 is listed twice',
    ],
    [{ JWT_PREVIOUS_SECRETS: 'p'.repeat(32) }, 'JWT_PREVIOUS_SECRETS_UNTIL is required'],
    ...['2026-12-01', '2026-12-01T12:00:00', '2026-02-30T12:00:00Z', 'tomorrow', '1796126400'].map(
      (until) => [
        { JWT_PREVIOUS_SECRETS: 'p'.repeat(32), JWT_PREVIOUS_SECRETS_UNTIL: until },
        `JWT_PREVIOUS_SECRETS_UNTIL must be a date and time with its zone`,
      ],
    ),
    [{ ENGINE_MEMORY_LIMIT_MB: '10' }, 'ENGINE_MEMORY_LIMIT_MB must be between 64'],
    [{ ENGINE_THREADS: '0' }, 'ENGINE_THREADS must be between 1 and 256, got 0'],
    [{ ENGINE_TEMP_LIMIT_MB: '1GB' }, 'ENGINE_TEMP_LIMIT_MB must be a whole number'],
  ] as [Record<string, string>, string][])('refuses %j', (env, message) => {
    expect(() => loadConfig(env, CWD)).toThrow(ConfigError);
    expect(() => loadConfig(env, CWD)).toThrow(message);
  });

  it('reads previous JWT secrets with the time they stop counting, and none by default', () => {
    expect(loadConfig({}, CWD)).toMatchObject({ jwtPreviousSecrets: [] });
    expect(loadConfig({}, CWD).jwtPreviousSecretsUntil).toBeUndefined();
    const [a, b] = ['a'.repeat(32), 'b'.repeat(40)];
    const config = loadConfig(
      {
        JWT_SECRET: 'x'.repeat(32),
        JWT_PREVIOUS_SECRETS: ` ${a} , ${b},`,
        JWT_PREVIOUS_SECRETS_UNTIL: '2026-12-01T13:30+01:30',
      },
      CWD,
    );
    expect(config.jwtPreviousSecrets).toEqual([a, b]);
    expect(config.jwtPreviousSecretsUntil?.toISOString()).toBe('2026-12-01T12:00:00.000Z');
  });

  it('never prints a secret in its error', () => {
    const secret = 'a-secret-nobody-should-read-in-a-log';
    expect(() =>
      loadConfig({ JWT_SECRET: secret, JWT_PREVIOUS_SECRETS: `${secret},short` }, CWD),
    ).toThrow(expect.objectContaining({ message: expect.not.stringContaining(secret) }));
  });

  it('names the variable on the error, in one line', () => {
    try {
      loadConfig({ PORT: '-1' }, CWD);
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe('PORT');
      expect((error as ConfigError).message).not.toContain('\n');
    }
  });

  it('takes a webhook secret made as .env.example and docs/operations.md say', () => {
    const secret = execSync('echo whsec_$(openssl rand -base64 32)', { shell: '/bin/sh' })
      .toString()
      .trim();
    const config = loadConfig({ WEBHOOK_URLS: 'https://hooks.example/a', WEBHOOK_SECRET: secret });
    expect(config.webhooks).toEqual({
      urls: ['https://hooks.example/a'],
      secret,
      maxAttempts: 10,
      retryBaseMs: 5000,
      timeoutMs: 10000,
    });
    expect(loadConfig({ BUILD_SCHEDULE: 'off' }).buildSchedule).toBe('off');
    expect(loadConfig({ BUILD_SCHEDULE: '0 6 * * *' }).buildSchedule).toEqual({
      pattern: '0 6 * * *',
      timezone: 'UTC',
    });
  });
});
