import { ConfigError, loadConfig } from '@/config/config';

const CWD = '/srv/drey';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({}, CWD);
    expect(config).toMatchObject({
      nodeEnv: 'development',
      host: '127.0.0.1',
      port: 4465,
      projectDir: '/srv/drey/examples/expenses',
      databaseUrl: undefined,
      redisUrl: undefined,
      redisPrefix: 'drey',
      dataDir: '/srv/drey/.data',
      tokenExpireMinutes: 30,
      maxResultRows: 100000,
      chromiumPath: '/usr/bin/chromium',
      logLevel: 'info',
      corsOrigins: [],
      loginMaxFailures: 5,
      loginMaxFailuresPerAddress: 20,
      loginWindowSeconds: 300,
      queryTimeoutMs: 30000,
      engine: { memoryLimitMb: 1024, threads: 2, tempLimitMb: 1024 },
    });
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
    });
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
    [{ DATABASE_URL: 'mysql://db/x' }, 'DATABASE_URL must use postgres: or postgresql:'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL is not a valid URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL must use redis: or rediss:'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of error, warn, info, debug'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be one of development, production, test'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET must be at least 32 characters long'],
    [{ ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD must be at least 8 characters long'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET is required when NODE_ENV=production'],
    [{ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }, 'ADMIN_PASSWORD is required'],
    [{ CORS_ORIGINS: 'example.com' }, 'CORS_ORIGINS has an invalid origin "example.com"'],
    [{ REDIS_PREFIX: 'a b' }, 'REDIS_PREFIX must be'],
    [{ ENGINE_MEMORY_LIMIT_MB: '10' }, 'ENGINE_MEMORY_LIMIT_MB must be between 64'],
    [{ ENGINE_THREADS: '0' }, 'ENGINE_THREADS must be between 1 and 256, got 0'],
    [{ ENGINE_TEMP_LIMIT_MB: '1GB' }, 'ENGINE_TEMP_LIMIT_MB must be a whole number'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env, CWD)).toThrow(ConfigError);
    expect(() => loadConfig(env, CWD)).toThrow(message);
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
});
