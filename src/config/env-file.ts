import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';

/**
 * Reads a `.env` file into `env` when there is one, as `@nestjs/config` does with its default
 * `envFilePath`: variables already set in the environment win over the file. `ENV_FILE` names another
 * file (which must exist); set to an empty value, no file is read. Node's own parser (`util.parseEnv`, the
 * one behind `node --env-file`) reads it, so neither a dotenv package nor a Nest module is needed before
 * the configuration is validated. Returns the file read, if any.
 */
export function loadEnvFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env.ENV_FILE;
  if (named === '') return undefined;
  const file = resolve(named ?? '.env');
  if (!existsSync(file)) {
    if (named !== undefined) throw new EnvFileError(`ENV_FILE: ${file} does not exist`);
    return undefined;
  }
  for (const [key, value] of Object.entries(parseEnv(readFileSync(file, 'utf8')))) {
    if (env[key] === undefined) env[key] = value;
  }
  return file;
}

export class EnvFileError extends Error {}
