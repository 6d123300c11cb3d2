export type Command = 'validate' | 'build' | 'compile';

export interface CliArgs {
  command: Command;
  /** `compile`'s dataset. */
  dataset?: string;
  /** `--project DIR`, instead of PROJECT_DIR. */
  project?: string;
  params: Record<string, string>;
  /** `--user NAME`, `--admin`, `--user-field name=value`: the caller `compile` renders for. */
  user: string | null;
  admin: boolean;
  userFields: Record<string, string>;
}

export const USAGE = `Usage: npm run drey -- <command> [options]

Commands:
  validate                     check the project; print every problem with its file and place
  build                        build the data environment under DATA_DIR
  compile <dataset>            print the SQL each model of the dataset runs, and the bound values

Options:
  --project DIR                the project folder (default: PROJECT_DIR, or examples/expenses)
  --param name=value           a selection, for compile (ids of multi_select separated by commas,
                               ranges as low..high); repeat for each parameter;
                               the others take their defaults
  --user NAME, --admin         the user compile renders for (default: anonymous)
  --user-field name=value      one of that user's fields; repeat for each`;

export class UsageError extends Error {}

function keyValue(text: string | undefined, option: string): [string, string] {
  const at = text?.indexOf('=') ?? -1;
  if (text === undefined || at < 1) throw new UsageError(`${option} needs name=value`);
  return [text.slice(0, at), text.slice(at + 1)];
}

export function parseArgs(argv: readonly string[]): CliArgs {
  const [command, ...rest] = argv;
  if (command !== 'validate' && command !== 'build' && command !== 'compile') {
    throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
  const args: CliArgs = { command, params: {}, user: null, admin: false, userFields: {} };
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index];
    const next = (): string | undefined => rest[++index];
    if (word === '--param') {
      const [name, value] = keyValue(next(), '--param');
      args.params[name] = value;
    } else if (word === '--user-field') {
      const [name, value] = keyValue(next(), '--user-field');
      args.userFields[name] = value;
    } else if (word === '--project') {
      args.project = next();
      if (!args.project) throw new UsageError('--project needs a folder');
    } else if (word === '--user') {
      args.user = next() ?? null;
      if (!args.user) throw new UsageError('--user needs a name');
    } else if (word === '--admin') {
      args.admin = true;
    } else if (command === 'compile' && !word.startsWith('--') && args.dataset === undefined) {
      args.dataset = word;
    } else {
      throw new UsageError(`unexpected "${word}"`);
    }
  }
  if (command === 'compile' && !args.dataset) throw new UsageError('compile needs a dataset name');
  return args;
}
