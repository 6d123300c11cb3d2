import { parseArgs as parseNodeArgs, ParseArgsConfig } from 'node:util';
import { ARGUMENT_BOUNDS, inputFault, storableCopy } from '@/core/input-rules';
import { CSV_FORMULAS, CsvFormulas } from '@/core/result-builtins';

export type Command =
  | 'validate'
  | 'build'
  | 'compile'
  | 'run'
  | 'dev'
  | 'mcp'
  | 'reset-password'
  | 'users add'
  | 'users list'
  | 'users unlock'
  | 'embed-token'
  | 'help'
  | 'version';

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

/** What `help` explains: a command, or the `users` group of commands. */
export type HelpTopic = Exclude<Command, 'help' | 'version'> | 'users';

export type RowFormat = 'table' | 'csv' | 'json';

export interface CliArgs {
  command: Command;
  /** The command `help` (or `--help`) explains; undefined for the tool's own help. */
  helpFor?: HelpTopic;
  /** `compile`'s and `run`'s dataset. */
  dataset?: string;
  /** The user of `users reset-password`, `users add` and `users unlock`. */
  username?: string;
  /** `--project DIR`, instead of PROJECT_DIR. */
  project?: string;
  params: Record<string, string>;
  /**
   * `compile`'s imagined caller: `--user NAME`, `--admin`, `--user-field name=value`; `--admin` and
   * `--user-field` are also the new user's of `users add`.
   */
  user: string | null;
  admin: boolean;
  userFields: Record<string, string>;
  /** `run --as NAME`: a user of the service's database whose rights and fields `run` takes. */
  as: string | null;
  /**
   * `run` and `users list`: how rows are printed; `run`: how many at most (undefined: a table's first 100,
   * every row else).
   */
  format: RowFormat;
  limit: number | undefined;
  /**
   * `run --csv-formulas escaped|raw`: how `--format csv` writes text cells, as the built-in `x_csv_formulas`
   * of the results endpoint (engine/export/csv-cells.ts); `users list --format csv` always escapes.
   */
  csvFormulas: CsvFormulas;
  /** `users reset-password|add --password-stdin`: the new password is read from standard input. */
  passwordStdin: boolean;
  /** `embed-token dataset|dashboard <name>`: the item it opens. */
  embed?: { kind: 'dataset' | 'dashboard'; name: string };
  /** `embed-token --default name=value`: values used when a request gives none. */
  defaults: Record<string, string>;
  /** `embed-token --minutes N`: its lifetime. */
  minutes?: number;
  /** `embed-token --subject S`: who views, as the host application names them. */
  subject?: string;
}

export const EXIT = { ok: 0, problem: 1, usage: 2 } as const;

/** Rows a table shows unless --limit says otherwise: a terminal's worth. csv and json print every row. */
export const TABLE_ROWS = 100;

/** A table holds its rows in memory to align its columns: this many at most (csv and json stream). */
export const TABLE_MAX_ROWS = 100_000;

const PROJECT_OPTION = `  --project DIR              the project folder (default: PROJECT_DIR, or examples/expenses)`;
const PASSWORD_OPTION = `  --password-stdin           read the new password from standard input (at least PASSWORD_MIN_LENGTH
                             characters, 8 by default)`;
const PARAM_OPTION = `  --param name=value         a selection (ids of a multi_select separated by commas, a range as
                             low..high); repeat for each parameter; the others take their defaults`;
const CALLER_OPTIONS = `${PARAM_OPTION}
  --user NAME, --admin       the caller it renders for (default: anonymous); imagined, not looked up
  --user-field name=value    one of that caller's fields; repeat for each`;

export const USAGE = `Usage: npm run drey -- <command> [options]     (or: node dist/cli/drey.js <command> ...)

Commands:
  validate                     check the project, its SQL included; print every problem with its file
                               and place
  build                        build the data environment under DATA_DIR
  compile <dataset>            print the SQL each model of the dataset runs, and the bound values
  run <dataset>                run the dataset with selections and print its rows
  dev                          serve the project and rebuild it whenever its files change
  mcp                          serve the MCP server over stdio for a desktop assistant (DREY_TOKEN)
  users add <name>             add a user to the service's database
  users list                   list the users, with their fields and whether failed logins locked them
  users unlock <name>          lift the lock that failed logins put on a user
  users reset-password <name>  set a user's password in the service's database
  embed-token dataset|dashboard <name>
                               print a token that opens one item, with locked parameters, to embed it
  help [command]               this text, or a command's (also: <command> --help)
  version                      the version of drey (also: --version)

Run \`npm run drey -- <command> --help\` for a command's options. Configuration comes from the
environment and from .env (see .env.example), as for the service.

Exit codes: 0 done, 1 a problem (printed on stderr), 2 a wrong command line, 130 (143) a build or
validate stopped by Ctrl-C (SIGTERM), its partial files removed.`;

const HELP: Record<HelpTopic, string> = {
  validate: `Usage: npm run drey -- validate [--project DIR]

Loads the project and checks it whole: its YAML, templates and parameters, and the SQL of every model,
which the engine plans (without running it) for the default selections and each option of its
select parameters. The SQL of the models that the other problems leave whole is checked too, so one
run prints every problem, grouped, with its file, line and column, and exits 1; or a summary of the
project and exits 0.

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
results endpoint does, and prints its rows. It runs as an anonymous caller, or with --as as a user of
the service's database (DATABASE_URL, or the embedded one under DATA_DIR): the dataset's scope applies
and the user's fields reach the parameters and the SQL, as for a request with that user's token.

${PROJECT_OPTION}
${PARAM_OPTION}
  --as NAME                  run with the rights and fields of user NAME (default: anonymous)
  --format table|csv|json    how rows are printed (default: table)
  --limit N                  print at most N rows (default: every row in csv and json, the first
                             ${TABLE_ROWS} in a table, which says how many it left out)
  --csv-formulas escaped|raw how csv writes text (default: escaped: each text cell quoted, and one a
                             spreadsheet would run as a formula, =1+1, with a ' before it; raw: as stored)`,
  dev: `Usage: npm run drey -- dev [--project DIR]     (or: npm run dev)

Serves the project as \`npm start\` does and watches its folder. After each change (files saved within
300 ms count as one) the project is checked whole, as \`validate\` does: its problems are printed and the
last good build goes on serving, or the server rebuilds (it reads the folder again) and serves the change.

${PROJECT_OPTION}`,
  mcp: `Usage: npm run drey -- mcp [--project DIR]     (or: node dist/cli/drey.js mcp)

Serves the MCP server of P/mcp (docs/mcp.md) over standard input and output, for a desktop assistant
that starts it: the same tools, scopes, cache and audit, signed in with DREY_TOKEN, a named token of the
service's users (POST P/tokens). It is one more process of the service, on its DATABASE_URL, REDIS_URL
and DATA_DIR; the log goes to standard error.

${PROJECT_OPTION}`,
  users: `Usage: npm run drey -- users <command> [options]

Commands on the users of the service's database (DATABASE_URL, or the embedded database under DATA_DIR):
  add <name>             add a user (password generated and printed once, or --password-stdin)
  list                   list the users, with their fields and whether failed logins locked them
  unlock <name>          lift the lock that failed logins put on a user
  reset-password <name>  set a user's password (generated and printed once, or --password-stdin)

Run \`npm run drey -- users <command> --help\` for a command's options.`,
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
  'embed-token': `Usage: npm run drey -- embed-token dataset|dashboard <name> [options]

Prints a short-lived embedding token (docs/embedding.md) that opens this one dataset or dashboard and
nothing else, as POST P/embed-tokens does, as JSON: {"token", "id", "expires_at", "resource"}. It is
signed with the service's JWT_SECRET and recorded in the service's audit log (DATABASE_URL, or the
embedded database under DATA_DIR). A value is read as JSON when it parses (100, true, ["0","1"]), as
text otherwise.

  --param name=value         a value the token locks; repeat for each parameter
  --default name=value       a value used when a request gives none; repeat for each
  --user-field name=value    one of the viewer's user fields, which the project's SQL reads
  --minutes N                how long it lives (default 10, at most EMBED_TOKEN_MAX_MINUTES)
  --subject NAME             who views, as your application names them (logs show embed:NAME)
${PROJECT_OPTION}`,
  'users unlock': `Usage: npm run drey -- users unlock <name>

Lifts the lock that failed logins put on user <name> (LOGIN_MAX_FAILURES within LOGIN_WINDOW_SECONDS):
their failed logins are forgotten, for every server process on the database at once. A lock on a client
address (LOGIN_MAX_FAILURES_PER_ADDRESS) is not lifted. Recorded in the audit log with actor "cli". The
same as DELETE P/users/{name}/lockout.`,
};

/** A wrong command line; `topic` is the command it was meant for, whose usage is printed with it. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly topic?: HelpTopic,
  ) {
    super(message);
  }
}

/**
 * The rules every door applies to its input (core/input-rules.ts), on what the command line gave, by
 * option: string sizes, how many names, text that storage holds. A shell passes no NUL in an argument,
 * but a script may pass a 100 KB value or thousands of `--param`s, which reach the same services as a
 * request's.
 */
function checkInput(args: CliArgs, rest: string[], fail: (message: string) => UsageError): void {
  const given: [string, unknown][] = [
    ['--param', args.params],
    ['--user-field', args.userFields],
    ['--default', args.defaults],
    ['--as', args.as],
    ['--user', args.user],
    ['--subject', args.subject],
    // A word is named by what it shows (made printable): `"x\uFFFDy" holds a NUL character`.
    ...rest.map((word): [string, unknown] => [
      JSON.stringify(storableCopy(word.slice(0, 40))),
      word,
    ]),
  ];
  for (const [option, value] of given) {
    const fault = inputFault(value, option, ARGUMENT_BOUNDS);
    if (fault) throw fail(fault.message);
  }
}

function keyValue(text: string, option: string): [string, string] {
  const at = text.indexOf('=');
  if (at < 1) throw new UsageError(`${option} needs name=value, not "${text}"`);
  return [text.slice(0, at), text.slice(at + 1)];
}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  project: { type: 'string' },
  param: { type: 'string', multiple: true },
  user: { type: 'string' },
  admin: { type: 'boolean' },
  'user-field': { type: 'string', multiple: true },
  as: { type: 'string' },
  format: { type: 'string' },
  limit: { type: 'string' },
  'csv-formulas': { type: 'string' },
  'password-stdin': { type: 'boolean' },
  default: { type: 'string', multiple: true },
  minutes: { type: 'string' },
  subject: { type: 'string' },
} satisfies ParseArgsConfig['options'];

type Option = keyof typeof OPTIONS;

/** The options each command takes, besides --help. */
const TAKES: Record<Exclude<Command, 'help' | 'version'>, Option[]> = {
  validate: ['project'],
  build: ['project'],
  compile: ['project', 'param', 'user', 'admin', 'user-field'],
  run: ['project', 'param', 'as', 'format', 'limit', 'csv-formulas'],
  dev: ['project'],
  mcp: ['project'],
  'reset-password': ['password-stdin'],
  'users add': ['admin', 'user-field', 'password-stdin', 'project'],
  'users list': ['format', 'project'],
  'users unlock': [],
  'embed-token': ['param', 'default', 'user-field', 'minutes', 'subject', 'project'],
};

/** Why an option a command does not take is refused, when a likely mistake has a better way. */
const INSTEAD: Partial<Record<Option, string>> = {
  user: "run takes its caller from the service's database: --as NAME",
  admin: "run takes its caller from the service's database: --as NAME (an administrator)",
  'user-field': 'run takes the fields of the user --as NAME names',
};

/** The help text of a command, or the tool's. */
export function helpText(topic?: HelpTopic): string {
  return topic ? HELP[topic] : USAGE;
}

const COMMANDS = [
  'validate',
  'build',
  'compile',
  'run',
  'dev',
  'embed-token',
  'mcp',
  'help',
  'version',
];

/** The command the words name, and the words after it; `users` alone is the users' help topic. */
function commandOf(words: string[]): { command: Command | 'users'; rest: string[] } {
  const [first, second, ...rest] = words;
  if (first === undefined) throw new UsageError('no command given');
  if (first === 'users') {
    if (second === 'reset-password') return { command: 'reset-password', rest };
    if (second === 'add' || second === 'list' || second === 'unlock') {
      return { command: `users ${second}`, rest };
    }
    if (second === undefined) return { command: 'users', rest };
    throw new UsageError(`unknown users command "${second}"`, 'users');
  }
  if (COMMANDS.includes(first)) {
    return { command: first as Command, rest: second === undefined ? rest : [second, ...rest] };
  }
  throw new UsageError(`unknown command "${first}"`);
}

/** The command a command line meant, read leniently: for the usage printed with its error. */
function topicOf(argv: readonly string[]): HelpTopic | undefined {
  try {
    const { positionals } = parseNodeArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: false,
    });
    const { command } = commandOf(positionals);
    return command === 'help' || command === 'version' ? undefined : command;
  } catch {
    return undefined;
  }
}

/** Reads a command line (Node's `util.parseArgs`: the standard reading of options, `--a=b` included). */
export function parseArgs(argv: readonly string[]): CliArgs {
  try {
    return parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError && error.topic === undefined) {
      throw new UsageError(error.message, topicOf(argv));
    }
    throw error;
  }
}

/**
 * `--limit -1` as `--limit=-1`: Node's parser takes a value that starts with a dash for an option and
 * refuses it as "ambiguous"; a negative number is a value, which the option's own check then judges (with
 * a message that says what it takes).
 */
function negativeValuesJoined(argv: readonly string[]): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') return [...args, ...argv.slice(i)];
    const option = /^--([a-z-]+)$/.exec(arg)?.[1];
    const next = argv[i + 1];
    const takesValue =
      option !== undefined &&
      Object.hasOwn(OPTIONS, option) &&
      OPTIONS[option as Option].type === 'string';
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      args.push(`${arg}=${next}`);
      i++;
    } else {
      args.push(arg);
    }
  }
  return args;
}

function parseCommandLine(argv: readonly string[]): CliArgs {
  let parsed;
  try {
    parsed = parseNodeArgs({
      args: negativeValuesJoined(argv),
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify.*$/s, ''));
  }
  const { values, positionals } = parsed;
  if (positionals.length === 0 && values.help) return { ...defaults(), command: 'help' };
  if (positionals.length === 0 && values.version) return { ...defaults(), command: 'version' };
  const { command, rest } = commandOf(positionals);
  if (command === 'help') {
    if (rest.length === 0) return { ...defaults(), command };
    const { command: about } = commandOf(rest);
    if (about === 'help' || about === 'version') return { ...defaults(), command };
    return { ...defaults(), command, helpFor: about };
  }
  if (values.help) {
    return command === 'version'
      ? { ...defaults(), command: 'help' }
      : { ...defaults(), command: 'help', helpFor: command };
  }
  if (command === 'users') throw new UsageError('users needs a command', 'users');
  if (command === 'version') {
    if (rest.length > 0 || Object.keys(values).some((key) => key !== 'version')) {
      throw new UsageError('version takes nothing');
    }
    return { ...defaults(), command };
  }
  const fail = (message: string) => new UsageError(message, command);
  for (const option of Object.keys(values) as Option[]) {
    if (!TAKES[command].includes(option)) {
      const instead = command === 'run' ? INSTEAD[option] : undefined;
      throw fail(`${command} takes no --${option}${instead ? `: ${instead}` : ''}`);
    }
  }
  const args: CliArgs = { ...defaults(), command };
  args.project = values.project;
  args.user = values.user ?? null;
  args.admin = values.admin ?? false;
  args.as = values.as ?? null;
  if (args.as === '') throw fail('--as needs a user name');
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
      throw fail(`--format must be table, csv or json, not "${values.format}"`);
    }
    args.format = values.format as RowFormat;
  }
  if (values.limit !== undefined) {
    if (!/^\d{1,15}$/.test(values.limit)) {
      throw fail(`--limit needs a whole number from 0 up, not "${values.limit.slice(0, 32)}"`);
    }
    args.limit = Number(values.limit);
  }
  if (values['csv-formulas'] !== undefined) {
    if (!(CSV_FORMULAS as readonly string[]).includes(values['csv-formulas'])) {
      throw fail(
        `--csv-formulas must be ${CSV_FORMULAS.join(' or ')}, not "${values['csv-formulas']}"`,
      );
    }
    args.csvFormulas = values['csv-formulas'] as CsvFormulas;
  }
  if (args.format === 'table' && (args.limit ?? 0) > TABLE_MAX_ROWS) {
    throw fail(
      `a table shows at most ${TABLE_MAX_ROWS} rows (it aligns them in memory): --format csv or json prints any number`,
    );
  }
  args.passwordStdin = values['password-stdin'] ?? false;
  for (const text of values.default ?? []) {
    const [name, value] = keyValue(text, '--default');
    args.defaults[name] = value;
  }
  if (values.minutes !== undefined) {
    if (!/^\d{1,6}$/.test(values.minutes)) throw fail('--minutes needs a whole number');
    args.minutes = Number(values.minutes);
  }
  args.subject = values.subject;
  checkInput(args, rest, fail);
  if (command === 'embed-token') {
    const [kind, name, extra] = rest;
    if (kind !== 'dataset' && kind !== 'dashboard') {
      throw fail('embed-token needs "dataset <name>" or "dashboard <name>"');
    }
    if (name === undefined) throw fail(`embed-token ${kind} needs a ${kind} name`);
    if (extra !== undefined) throw fail(`unexpected "${extra}"`);
    args.embed = { kind, name };
    return args;
  }

  const named: Command[] = ['reset-password', 'users add', 'users unlock'];
  const wanted = command === 'compile' || command === 'run' || named.includes(command) ? 1 : 0;
  if (rest.length > wanted) throw fail(`unexpected "${rest[wanted]}"`);
  if (command === 'compile' || command === 'run') {
    if (rest.length === 0) throw fail(`${command} needs a dataset name`);
    args.dataset = rest[0];
  }
  if (named.includes(command)) {
    const words = command === 'reset-password' ? 'users reset-password' : command;
    if (rest.length === 0) throw fail(`${words} needs a user name`);
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
    as: null,
    format: 'table',
    limit: undefined,
    csvFormulas: CSV_FORMULAS[0],
    passwordStdin: false,
    defaults: {},
  };
}
