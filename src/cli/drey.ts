import { resolve } from 'node:path';
import { CliArgs, EXIT, helpText, isUsersCommand, parseArgs, UsageError } from '@/cli/cli-args';
import type { CliOutput } from '@/cli/cli-output';
import { build, compile, EngineSetup, InterruptedError, validate } from '@/cli/cli-commands';
import { AppConfig, loadConfig } from '@/config/config';
import { withProjectDataDir } from '@/config/data-dir';
import { loadEnvFile } from '@/config/env-file';
import type { Env } from '@/engine/connections/connection-registry';
import { loadProject, readProjectName } from '@/core/project/project-loader';
import { SERVICE_VERSION } from '@/config/service-version';

/**
 * The command line for project authors and operators: `npm run drey -- <command>` (`--help` lists them).
 * It uses the loader and the engine directly, without Nest's container, Redis or a server; `run` reads through
 * the service's results reader, built from its constructors (datasets-reader.ts). Only `users` and
 * `run --as` open the service's database. Returns the exit code ({@link EXIT}).
 */
export async function main(argv: readonly string[], given: Env, output: CliOutput) {
  try {
    const args = parseArgs(argv);
    if (args.command === 'help') {
      output.out(helpText(args.helpFor));
      return EXIT.ok;
    }
    if (args.command === 'version') {
      output.out(`drey ${SERVICE_VERSION}`);
      return EXIT.ok;
    }
    // The process's environment, completed from .env as the service's is.
    const env = { ...given };
    loadEnvFile(env);
    let config = loadConfig(env);
    // DATA_DIR, or the data folder of the project the command is about (`--project`, else PROJECT_DIR):
    // `drey build --project ../shop` builds into shop's folder, never into the one another project serves.
    // Not for `validate` (a scratch folder; a broken project.yml is one of the problems it lists) nor `dev`
    // (its server resolves its own).
    if (args.command !== 'validate' && args.command !== 'dev') {
      const resolved = withProjectDataDir(
        config,
        readProjectName(args.project ? resolve(args.project) : config.projectDir),
      );
      config = resolved.config;
      if (resolved.earlierState) output.err(`note: ${resolved.earlierState}`);
    }
    if (isUsersCommand(args.command)) {
      // Loaded only here: it brings the database layer (TypeORM, argon2), which the other commands need not.
      // A relative path: the build rewrites `@/` paths only in static imports.
      const { usersCommand } = await import('./users-command');
      await usersCommand(args.command, config, args, output);
      return EXIT.ok;
    }
    if (args.command === 'embed-token') {
      // Loaded only here, as the users commands are: it records the token in the service's audit log.
      const { embedTokenCommand } = await import('./embed-command');
      await embedTokenCommand(config, args, output);
      return EXIT.ok;
    }
    if (args.command === 'mcp') {
      // Loaded only here: it brings the whole application (Nest, the database, the engine).
      const { mcpCommand } = await import('./mcp-command');
      await mcpCommand(config, output);
      return EXIT.ok;
    }
    if (args.command === 'dev') {
      const { dev } = await import('./dev-command');
      const projectDir = args.project ? resolve(args.project) : config.projectDir;
      // Not loaded here: a project that does not load is the server's to handle (it serves the last good
      // build, or exits for dev to wait for a fix).
      return await dev(projectDir, env, config.engine, output, config.dataDir);
    }
    await projectCommand(
      args,
      config,
      { dataDir: config.dataDir, env, limits: config.engine },
      output,
    );
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      // The usage of the command meant, when it is known: the general one would not show its options.
      output.err(`${error.message}\n\n${helpText(error.topic)}`);
      return EXIT.usage;
    }
    if (error instanceof InterruptedError) {
      output.err(error.message);
      return error.exitCode;
    }
    // Project, config, template and build errors carry messages written for the reader: no stack trace.
    output.err(error instanceof Error ? error.message : String(error));
    return EXIT.problem;
  }
}

async function projectCommand(
  args: CliArgs,
  config: AppConfig,
  options: EngineSetup,
  output: CliOutput,
): Promise<void> {
  const dir = args.project ? resolve(args.project) : config.projectDir;
  // validate reads the folder itself: it goes on past the problems of its files to check the SQL.
  if (args.command === 'validate') return validate(dir, options, output);
  const project = loadProject(dir);
  switch (args.command) {
    case 'build':
      return build(project, options, output);
    case 'compile':
      return compile(project, args, options, output);
    case 'run': {
      // Loaded only here, as `mcp` is: the results reader brings Nest's decorators, which the other
      // commands need not.
      const { run } = await import('./run-command');
      if (args.as === null) return run(project, args, config, options, output);
      // Loaded only here, as the users commands are: the database layer is needed for --as alone.
      const { callerOf } = await import('./service-database');
      const caller = await callerOf(config, project, args.as, output);
      return run(project, args, config, options, output, caller);
    }
    case 'help':
    case 'version':
    case 'dev':
    case 'mcp':
    case 'reset-password':
    case 'users add':
    case 'users list':
    case 'users unlock':
    case 'embed-token':
      throw new Error(`${args.command} does not work on the project`);
  }
}

/** More than a password could be (256 characters of up to 4 bytes, a line break): not read further. */
const MAX_STDIN_BYTES = 4096;

/** Standard input, whole (it holds a password: bounded). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin) {
    bytes += (chunk as Buffer).length;
    if (bytes > MAX_STDIN_BYTES) {
      throw new Error(`standard input holds more than ${MAX_STDIN_BYTES} bytes: not a password`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

if (require.main === module) {
  // A reader that stops early (`drey run ... | head`) closes the pipe: stop quietly, as Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(EXIT.ok);
      throw error;
    });
  }
  void main(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    // A progress bar redrawn in place, on a terminal only (a log file gets one line per model).
    status: process.stderr.isTTY ? (line) => process.stderr.write(`\r\x1b[K${line}`) : undefined,
    readInput: readStdin,
    drained: () =>
      process.stdout.writableNeedDrain
        ? new Promise((resolve) => process.stdout.once('drain', resolve))
        : Promise.resolve(),
  }).then((code) => {
    process.exitCode = code;
    // `drey mcp` ran the application: its connections (database pool, Redis, Chromium) would keep the
    // process alive once its assistant closed standard input, or after it failed to start.
    if (process.argv[2] === 'mcp') process.exit(code);
  });
}
