import { resolve } from 'node:path';
import { parseArgs, USAGE, UsageError } from '@/cli/cli-args';
import { build, compile, Output, validate } from '@/cli/cli-commands';
import { loadConfig } from '@/config/config';
import type { Env } from '@/engine/connections/connection-registry';
import { loadProject } from '@/core/project/project-loader';

/**
 * The command line for project authors: `npm run drey -- validate | build | compile <dataset>`. It uses the
 * loader and the engine directly, without Nest, Postgres or Redis. Returns the exit code.
 */
export async function main(
  argv: readonly string[],
  env: Env,
  output: Output & { err(line: string): void },
) {
  try {
    const args = parseArgs(argv);
    const config = loadConfig(env);
    const project = loadProject(args.project ? resolve(args.project) : config.projectDir);
    switch (args.command) {
      case 'validate':
        validate(project, output);
        break;
      case 'build':
        await build(project, { dataDir: config.dataDir, env }, output);
        break;
      case 'compile':
        await compile(project, args, { dataDir: config.dataDir, env }, output);
        break;
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    // Project, config, template and build errors carry messages written for the reader: no stack trace.
    output.err(error instanceof Error ? error.message : String(error));
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }).then((code) => {
    process.exitCode = code;
  });
}
