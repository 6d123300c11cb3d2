import type { NestExpressApplication } from '@nestjs/platform-express';
import { BuildQueue } from '@/builds/build-queue';
import { JsonLogger } from '@/runtime/json-logger';
import type { AppConfig } from '@/config/config';
import { SECRETS, Secrets } from '@/config/secrets';
import { Database } from '@/database/database';
import { ServedProject } from '@/core/project/served-project';
import { UsersService } from '@/users/users.service';

/**
 * What an operator reads once the service listens: one `info` line with where it listens, the project, the
 * database and queue in use and the docs; and, when this start created the admin user with a generated
 * password, a block on stderr that stands out from the JSON lines (it is shown once, not logged).
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
    // The process to signal (SIGHUP rebuilds; SIGTERM stops): under `npm start`, npm is another process,
    // which forwards SIGTERM and SIGINT but not SIGHUP.
    pid: process.pid,
    docs: `${url}/docs`,
    project: project.name,
    projectDir: project.dir,
    // The data folder is the project's own by default (.data/<project name>): say which.
    dataDir: config.dataDir,
    database: database === 'embedded' ? `embedded PGlite under ${config.dataDir}` : 'postgres',
    queue: queue === 'bullmq' ? 'redis (BullMQ)' : 'in-process',
    ...(envFile ? { envFile } : {}),
  });
  const webhooks = config.webhooks.urls;
  if (webhooks.length > 0) {
    // Which receivers are told of every build's end. Only the origins: a receiver's path or query often
    // holds its own secret (a chat service's hook URL), and the log is read by more people than the config.
    logger.emit('info', 'webhooks configured', {
      endpoints: webhooks.map((url) => new URL(url).origin),
      events: ['build.succeeded', 'build.failed'],
      maxAttempts: config.webhooks.maxAttempts,
    });
  }
  const secrets = app.get<Secrets>(SECRETS);
  // A rotation's end is a time: say it, and say when the variables have become useless.
  const previous = secrets.previousJwtSecrets;
  if (previous) {
    const until = previous.until.toISOString();
    if (previous.until.getTime() > Date.now()) {
      logger.emit('info', 'tokens of previous JWT secrets accepted', {
        secrets: previous.secrets.length,
        until,
      });
    } else {
      logger.emit('warn', 'tokens of previous JWT secrets no longer accepted', {
        until,
        hint: 'remove JWT_PREVIOUS_SECRETS and JWT_PREVIOUS_SECRETS_UNTIL',
      });
    }
  }
  const users = app.get(UsersService);
  // Only when this start created the admin with it: an admin that existed already keeps its own password
  // (UsersService says so when the kept one does not match), and printing another would mislead.
  const generated =
    users.adminCreated && !secrets.adminPasswordFromEnvironment ? secrets.adminPassword : undefined;
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
  // Beside the banner's place, where the operator looks for the password: the log's warning, again.
  const notApplied = users.adminPasswordNotApplied;
  if (notApplied) {
    const rule = '='.repeat(72);
    process.stderr.write(['', rule, `  ${notApplied}`, rule, ''].join('\n') + '\n');
  }
}
