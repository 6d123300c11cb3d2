import type { NestExpressApplication } from '@nestjs/platform-express';
import { BuildQueue } from '@/builds/build-queue';
import { JsonLogger } from '@/common/json-logger';
import type { AppConfig } from '@/config/config';
import { SECRETS, Secrets } from '@/config/secrets';
import { Database } from '@/database/database';
import { ServedProject } from '@/core/project/served-project';

/**
 * What an operator reads once the service listens: one `info` line with where it listens, the project, the
 * database and queue in use and the docs; and, when this start generated the admin password, a block on
 * stderr that stands out from the JSON lines (it is shown once, not logged).
 */
export async function startupSummary(
  app: NestExpressApplication,
  config: AppConfig,
  logger: JsonLogger,
  envFile?: string,
): Promise<void> {
  const url = (await app.getUrl()).replace('[::1]', 'localhost');
  const project = app.get(ServedProject).current;
  const database = app.get(Database).kind;
  const queue = app.get(BuildQueue).kind;
  logger.emit('info', 'listening', {
    url,
    docs: `${url}/docs`,
    project: project.name,
    projectDir: project.dir,
    database: database === 'embedded' ? `embedded PGlite under ${config.dataDir}` : 'postgres',
    queue: queue === 'bullmq' ? 'redis (BullMQ)' : 'in-process',
    ...(envFile ? { envFile } : {}),
  });
  const generated = app.get<Secrets>(SECRETS).generatedAdminPassword;
  if (generated) {
    const rule = '='.repeat(72);
    process.stderr.write(
      [
        '',
        rule,
        `  Admin password, generated (shown once; kept in ${config.dataDir}/secrets.json):`,
        '',
        `      ${generated}`,
        '',
        `  Sign in as "admin" at ${url}/docs, or set ADMIN_PASSWORD before the first start.`,
        rule,
        '',
      ].join('\n') + '\n',
    );
  }
}
