import { resolve } from 'node:path';
import { CliArgs, EXIT, helpText, parseArgs, USAGE, UsageError } from '@/cli/cli-args';
import { build, compile, EngineSetup, Output, run, validate } from '@/cli/cli-commands';
import { loadConfig } from '@/config/config';
import { withProjectDataDir } from '@/config/data-dir';
import { loadEnvFile } from '@/config/env-file';
import type { Env } from '@/engine/connections/connection-registry';
import { loadProject, readProjectName } from '@/core/project/project-loader';

export interface CliOutput extends Output {
  err(line: string): void;
  /** Standard input, for `users reset-password --password-stdin`. */
  readInput?(): Promise<string>;
}

/**
 * The command line for project authors and operators: `npm run drey -- <command>` (`--help` lists them).
 * It uses the loader and the engine directly, without Nest, Redis or a server; only `users reset-password`
 * opens the service's database. Returns the exit code ({@link EXIT}).
 */
export async function main(argv: readonly string[], given: Env, output: CliOutput) {
  try {
    const args = parseArgs(argv);
    if (args.command === 'help') {
      output.out(helpText(args.helpFor));
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
    if (args.command === 'reset-password') {
      // Loaded only here: it brings the database layer (TypeORM, argon2), which the other commands need not.
      // A relative path: the build rewrites `@/` paths only in static imports.
      const { resetPassword } = await import('./users-command');
      await resetPassword(config, args, output);
      return EXIT.ok;
    }
    if (args.command === 'dev') {
      const { dev } = await import('./dev-command');
      const projectDir = args.project ? resolve(args.project) : config.projectDir;
      loadProject(projectDir);
      return await dev(projectDir, env, config.engine, output);
    }
    await projectCommand(
      args,
      config.projectDir,
      { dataDir: config.dataDir, env, limits: config.engine },
      output,
    );
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(`${error.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    // Project, config, template and build errors carry messages written for the reader: no stack trace.
    output.err(error instanceof Error ? error.message : String(error));
    return EXIT.problem;
  }
}

async function projectCommand(
  args: CliArgs,
  projectDir: string,
  options: EngineSetup,
  output: Output,
): Promise<void> {
  const project = loadProject(args.project ? resolve(args.project) : projectDir);
  switch (args.command) {
    case 'validate':
      return validate(project, options, output);
    case 'build':
      return build(project, options, output);
    case 'compile':
      return compile(project, args, options, output);
    case 'run':
      return run(project, args, options, output);
    case 'help':
    case 'dev':
    case 'reset-password':
      throw new Error(`${args.command} does not work on the project`);
  }
}

/** Standard input, whole. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
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
  }).then((code) => {
    process.exitCode = code;
  });
}
