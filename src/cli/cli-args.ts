import { parseArgs as parseNodeArgs, ParseArgsConfig } from 'node:util';

export type Command =
  | 'validate'
  | 'build'
  | 'compile'
  | 'run'
  | 'dev'
  | 'reset-password'
  | 'users add'
  | 'users list'
  | 'users unlock'
  | 'help';

/** The `users` subcommands, which open the service's database (src/cli/users-command.ts). */
export const USERS_COMMANDS = [
  'reset-password',
  'users add',
  'users list',
  'users unlock',
] as const;
export type UsersCommand = (typeof USERS_COMMANDS)[number];

export function isUsersCommand(command: Command): command is UsersCommand {
  return (USERS_COMMANDS as readonly Command[]).includes(command);
}

export type RowFormat = 'table' | 'csv' | 'json';

export interface CliArgs {
  command: Command;
  /** The command `help` (or `--help`) explains; undefined for the tool's own help. */
  helpFor?: Exclude<Command, 'help'>;
  /** `compile`'s and `run`'s dataset. */
  dataset?: string;
  /** The user of `users reset-password`, `users add` and `users unlock`. */
  username?: string;
  /** `--project DIR`, instead of PROJECT_DIR. */
  project?: string;
  params: Record<string, string>;
  /**
   * `--user NAME`, `--admin`, `--user-field name=value`: the caller `compile` and `run` run for; `--admin`
   * and `--user-field` are also the new user's of `users add`.
   */
  user: string | null;
  admin: boolean;
  userFields: Record<string, string>;
  /** `run` and `users list`: how rows are printed; `run`: how many at most. */
  format: RowFormat;
  limit: number;
  /** `users reset-password|add --password-stdin`: the new password is read from standard input. */
  passwordStdin: boolean;
}

export const EXIT = { ok: 0, problem: 1, usage: 2 } as const;

const PROJECT_OPTION = `  --project DIR              the project folder (default: PROJECT_DIR, or examples/expenses)`;
const PASSWORD_OPTION = `  --password-stdin           read the new password from standard input (at least PASSWORD_MIN_LENGTH
                             characters, 8 by default)`;
const CALLER_OPTIONS = `  --param name=value         a selection (ids of a multi_select separated by commas, a range as
                             low..high); repeat for each parameter; the others take their defaults
  --user NAME, --admin       the user it runs for (default: anonymous)
  --user-field name=value    one of that user's fields; repeat for each`;

export const USAGE = `Usage: npm run drey -- <command> [options]     (or: node dist/cli/drey.js <command> ...)

Commands:
  validate                     check the project, its SQL included; print every problem with its file
                               and place
  build                        build the data environment under DATA_DIR
  compile <dataset>            print the SQL each model of the dataset runs, and the bound values
  run <dataset>                run the dataset with selections and print its rows
  dev                          serve the project and rebuild it whenever its files change
  users add <name>             add a user to the service's database
  users list                   list the users, with their fields and whether failed logins locked them
  users unlock <name>          lift the lock that failed logins put on a user
  users reset-password <name>  set a user's password in the service's database
  help [command]               this text, or a command's

Run \`npm run drey -- <command> --help\` for a command's options. Configuration comes from the
environment and from .env (see .env.example), as for the service.

Exit codes: 0 done, 1 a problem (printed on stderr), 2 a wrong command line.`;

const HELP: Record<Exclude<Command, 'help'>, string> = {
  validate: `Usage: npm run drey -- validate [--project DIR]

Loads the project and checks it whole: its YAML, templates and parameters, and the SQL of every model,
which the engine plans (without running it) for the default selections and each option of its
select parameters. Prints every problem at once,
with its file, line and column, and exits 1; or a summary of the project and exits 0.

${PROJECT_OPTION}`,
  build: `Usage: npm run drey -- build [--project DIR]

Builds the data environment (seeds, sources and build models) under DATA_DIR and makes it the current
one, printing each model as it is built. A server on the same DATA_DIR follows the new build.

${PROJECT_OPTION}`,
  compile: `Usage: npm run drey -- compile <dataset> [options]

Prints the SQL each model of the dataset runs for these selections, with placeholders, and the values
bound to them. Needs a build when the parameters take options from the built tables.

${PROJECT_OPTION}
${CALLER_OPTIONS}`,
  run: `Usage: npm run drey -- run <dataset> [options]

Runs the dataset on the current build under DATA_DIR (run \`build\` first) with these selections, as the
results endpoint does, and prints its rows.

${PROJECT_OPTION}
${CALLER_OPTIONS}
  --format table|csv|json    how rows are printed (default: table)
  --limit N                  print at most N rows (default: 100; a table says how many more there were)`,
  dev: `Usage: npm run drey -- dev [--project DIR]     (or: npm run dev)

Serves the project as \`npm start\` does and watches its folder. After each change (files saved within
300 ms count as one) the project is checked whole, as \`validate\` does: its problems are printed and the
last good build goes on serving, or the server rebuilds (it reads the folder again) and serves the change.

${PROJECT_OPTION}`,
  'reset-password': `Usage: npm run drey -- users reset-password <name> [--password-stdin]

Sets the password of user <name> in the service's database (DATABASE_URL, or the embedded database under
DATA_DIR, which must not be in use by a running server). Without --password-stdin a password is generated
and printed once. The user's existing tokens stay valid until they expire or are revoked. Recorded in the
audit log with actor "cli".

${PASSWORD_OPTION}`,
  'users add': `Usage: npm run drey -- users add <name> [--admin] [--user-field name=value]... [--password-stdin]

Adds user <name> to the service's database (DATABASE_URL, or the embedded database under DATA_DIR), as
POST P/users does: the project's user fields take their defaults unless given, and are checked against
the project's user_fields. Without --password-stdin a password is generated and printed once. Recorded in
the audit log with actor "cli".

  --admin                    the user is an administrator
  --user-field name=value    one of the project's user fields; repeat for each
${PROJECT_OPTION}
${PASSWORD_OPTION}`,
  'users list': `Usage: npm run drey -- users list [--format table|csv|json]

Lists the users of the service's database: name, whether an administrator, whether failed logins locked
them (LOGIN_MAX_FAILURES within LOGIN_WINDOW_SECONDS) and for how many seconds more, then the project's
user fields (with their defaults where none is stored).

  --format table|csv|json    how rows are printed (default: table)
${PROJECT_OPTION}`,
  'users unlock': `Usage: npm run drey -- users unlock <name>

Lifts the lock that failed logins put on user <name> (LOGIN_MAX_FAILURES within LOGIN_WINDOW_SECONDS):
their failed logins are forgotten, for every server process on the database at once. A lock on a client
address (LOGIN_MAX_FAILURES_PER_ADDRESS) is not lifted. Recorded in the audit log with actor "cli". The
same as DELETE P/users/{name}/lockout.`,
};

export class UsageError extends Error {}

function keyValue(text: string, option: string): [string, string] {
  const at = text.indexOf('=');
  if (at < 1) throw new UsageError(`${option} needs name=value, not "${text}"`);
  return [text.slice(0, at), text.slice(at + 1)];
}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  project: { type: 'string' },
  param: { type: 'string', multiple: true },
  user: { type: 'string' },
  admin: { type: 'boolean' },
  'user-field': { type: 'string', multiple: true },
  format: { type: 'string' },
  limit: { type: 'string' },
  'password-stdin': { type: 'boolean' },
} satisfies ParseArgsConfig['options'];

/** The options each command takes, besides --help. */
const TAKES: Record<Exclude<Command, 'help'>, (keyof typeof OPTIONS)[]> = {
  validate: ['project'],
  build: ['project'],
  compile: ['project', 'param', 'user', 'admin', 'user-field'],
  run: ['project', 'param', 'user', 'admin', 'user-field', 'format', 'limit'],
  dev: ['project'],
  'reset-password': ['password-stdin'],
  'users add': ['admin', 'user-field', 'password-stdin', 'project'],
  'users list': ['format', 'project'],
  'users unlock': [],
};

/** The help text of a command, or the tool's. */
export function helpText(command?: Exclude<Command, 'help'>): string {
  return command ? HELP[command] : USAGE;
}

function commandOf(words: string[]): { command: Command; rest: string[] } {
  const [first, second, ...rest] = words;
  if (first === undefined) throw new UsageError('no command given');
  if (first === 'users') {
    if (second === 'reset-password') return { command: 'reset-password', rest };
    if (second === 'add' || second === 'list' || second === 'unlock') {
      return { command: `users ${second}`, rest };
    }
    throw new UsageError(
      second === undefined ? 'users needs a subcommand' : `unknown users command "${second}"`,
    );
  }
  if (['validate', 'build', 'compile', 'run', 'dev', 'help'].includes(first)) {
    return { command: first as Command, rest: second === undefined ? rest : [second, ...rest] };
  }
  throw new UsageError(`unknown command "${first}"`);
}

/** Reads a command line (Node's `util.parseArgs`: the standard reading of options, `--a=b` included). */
export function parseArgs(argv: readonly string[]): CliArgs {
  let parsed;
  try {
    parsed = parseNodeArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify.*$/s, ''));
  }
  const { values, positionals } = parsed;
  if (positionals.length === 0 && values.help) {
    return { ...defaults(), command: 'help' };
  }
  const { command, rest } = commandOf(positionals);
  if (command === 'help') {
    if (rest.length === 0) return { ...defaults(), command };
    const { command: about } = commandOf(rest);
    if (about === 'help') return { ...defaults(), command };
    return { ...defaults(), command, helpFor: about };
  }
  if (values.help) return { ...defaults(), command: 'help', helpFor: command };
  for (const option of Object.keys(values) as (keyof typeof OPTIONS)[]) {
    if (!TAKES[command].includes(option)) {
      throw new UsageError(`${command} takes no --${option}`);
    }
  }
  const args: CliArgs = { ...defaults(), command };
  args.project = values.project;
  args.user = values.user ?? null;
  args.admin = values.admin ?? false;
  for (const text of values.param ?? []) {
    const [name, value] = keyValue(text, '--param');
    args.params[name] = value;
  }
  for (const text of values['user-field'] ?? []) {
    const [name, value] = keyValue(text, '--user-field');
    args.userFields[name] = value;
  }
  if (values.format !== undefined) {
    if (!['table', 'csv', 'json'].includes(values.format)) {
      throw new UsageError(`--format must be table, csv or json, not "${values.format}"`);
    }
    args.format = values.format as RowFormat;
  }
  if (values.limit !== undefined) {
    if (!/^\d+$/.test(values.limit)) throw new UsageError('--limit needs a whole number');
    args.limit = Number(values.limit);
  }
  args.passwordStdin = values['password-stdin'] ?? false;

  const named = ['reset-password', 'users add', 'users unlock'];
  const wanted = command === 'compile' || command === 'run' || named.includes(command) ? 1 : 0;
  if (rest.length > wanted) throw new UsageError(`unexpected "${rest[wanted]}"`);
  if (command === 'compile' || command === 'run') {
    if (rest.length === 0) throw new UsageError(`${command} needs a dataset name`);
    args.dataset = rest[0];
  }
  if (named.includes(command)) {
    const words = command === 'reset-password' ? 'users reset-password' : command;
    if (rest.length === 0) throw new UsageError(`${words} needs a user name`);
    args.username = rest[0];
  }
  return args;
}

function defaults(): Omit<CliArgs, 'command'> {
  return {
    params: {},
    user: null,
    admin: false,
    userFields: {},
    format: 'table',
    limit: 100,
    passwordStdin: false,
  };
}
