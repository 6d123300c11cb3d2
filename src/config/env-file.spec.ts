import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvFileError, loadEnvFile } from '@/config/env-file';

describe('loadEnvFile', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drey-env-'));
    file = join(dir, 'x.env');
    writeFileSync(
      file,
      'PORT=5000\nLOG_LEVEL=debug\n# a comment\nJWT_SECRET="quoted # not a comment"\n',
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('fills what the environment does not set; the environment wins', () => {
    const env: NodeJS.ProcessEnv = { ENV_FILE: file, PORT: '4465' };
    expect(loadEnvFile(env)).toBe(file);
    expect(env).toMatchObject({
      PORT: '4465',
      LOG_LEVEL: 'debug',
      JWT_SECRET: 'quoted # not a comment',
    });
  });

  it('reads nothing when ENV_FILE is empty, and refuses an ENV_FILE that is missing', () => {
    const env: NodeJS.ProcessEnv = { ENV_FILE: '' };
    expect(loadEnvFile(env)).toBeUndefined();
    expect(env.PORT).toBeUndefined();
    expect(() => loadEnvFile({ ENV_FILE: join(dir, 'missing.env') })).toThrow(EnvFileError);
  });

  it('reads ./.env by default, and nothing when there is none', () => {
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      expect(loadEnvFile({})).toBeUndefined();
      writeFileSync(join(dir, '.env'), 'PORT=6000\n');
      const env: NodeJS.ProcessEnv = {};
      expect(loadEnvFile(env)).toBe(join(dir, '.env'));
      expect(env.PORT).toBe('6000');
    } finally {
      process.chdir(cwd);
    }
  });
});
