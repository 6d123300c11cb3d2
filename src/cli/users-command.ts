import { resolve } from 'node:path';
import type { DataSource } from 'typeorm';
import { AuditService } from '@/audit/audit.service';
import type { CliArgs, UsersCommand } from '@/cli/cli-args';
import type { CliOutput } from '@/cli/cli-output';
import { formatRows } from '@/cli/row-formats';
import { openServiceDatabase } from '@/cli/service-database';
import { JsonLogger } from '@/runtime/json-logger';
import type { AppConfig } from '@/config/config';
import { DomainError } from '@/core/errors';
import { loadProject } from '@/core/project/project-loader';
import type { UserField, UserFieldValue } from '@/core/user-fields';
import { lockoutOf, userKey } from '@/core/users/login-lockout';
import { ARGUMENT_BOUNDS, inputFault } from '@/core/input-rules';
import { checkNewPassword, generatePassword } from '@/core/users/password-policy';
import { AuditEventsRepository } from '@/database/tables/audit-events.repository';
import { LoginFailuresRepository } from '@/database/tables/login-failures.repository';
import { Transactions } from '@/database/transactions/transactions';
import { UsersRepository } from '@/database/tables/users.repository';
import type { JsonValue, ResultColumn } from '@/engine/sql/query-result';
import { addUser as insertUser } from '@/users/add-user';
import { hashPassword } from '@/users/passwords';
import { InvalidUserError, parseNewUser, withFieldDefaults } from '@/users/user-fields.rules';

/** Who the audit log names for what these commands do: whoever runs the CLI has the database's rights. */
const ACTOR = 'cli';

/** The `users` commands; each opens the service's database through {@link withServiceDatabase}. */
export async function usersCommand(
  command: UsersCommand,
  config: AppConfig,
  args: CliArgs,
  output: CliOutput,
): Promise<void> {
  switch (command) {
    case 'reset-password':
      return resetPassword(config, args, output);
    case 'users add':
      return addUser(config, args, output);
    case 'users list':
      return listUsers(config, args, output);
    case 'users unlock':
      return unlockUser(config, args, output);
  }
}

/**
 * The service's database for the time of `work`: the one place these commands open it (how, beside a running
 * server or not, is service-database.ts's to decide).
 */
async function withServiceDatabase<T>(
  config: AppConfig,
  command: UsersCommand,
  output: CliOutput,
  work: (dataSource: DataSource) => Promise<T>,
): Promise<T> {
  // Beside a running server on the embedded database, through that server's database (service-database.ts).
  const words = command === 'reset-password' ? 'users reset-password' : command;
  const database = await openServiceDatabase(config, `drey ${words}`, output);
  try {
    return await work(database.dataSource);
  } finally {
    await database.close();
  }
}

/** The tables these commands use, and the audit log the API writes (each write and its row in one transaction). */
function tablesOf(dataSource: DataSource, output: CliOutput) {
  return {
    users: new UsersRepository(dataSource),
    failures: new LoginFailuresRepository(dataSource),
    audit: new AuditService(
      new AuditEventsRepository(dataSource),
      new Transactions(dataSource),
      new JsonLogger('error', (line) => output.err(line.trimEnd())),
    ),
  };
}

/**
 * The new password: read from standard input (one trailing line break dropped), or generated; either way
 * the policy's (PASSWORD_MIN_LENGTH), as the API's.
 */
async function newPassword(
  config: AppConfig,
  args: CliArgs,
  output: CliOutput,
): Promise<{ password: string; generated: boolean }> {
  if (!args.passwordStdin) {
    return { password: generatePassword(config.passwordMinLength), generated: true };
  }
  if (!output.readInput) throw new Error('--password-stdin: there is no standard input to read');
  const password = (await output.readInput()).replace(/\r?\n$/, '');
  // The HTTP door refuses a NUL in a form: a password holding one could be set here and never typed there.
  const fault = inputFault(password, 'the password', ARGUMENT_BOUNDS);
  if (fault) throw new InvalidUserError(fault.message);
  checkNewPassword(password, config.passwordMinLength);
  return { password, generated: false };
}

function printPassword(output: CliOutput, username: string, password: string): void {
  output.out(`The password of "${username}" is now (shown once):`);
  output.out(`    ${password}`);
}

function noSuchUser(username: string): DomainError {
  return new DomainError('user_not_found', `there is no user "${username}"`);
}

/**
 * `users reset-password <name>`: sets the password (audited, actor `cli`), and prints a generated password
 * once.
 */
async function resetPassword(config: AppConfig, args: CliArgs, output: CliOutput): Promise<void> {
  const username = args.username ?? '';
  const { password, generated } = await newPassword(config, args, output);
  // Hashed before the transaction: argon2 takes its time, a transaction should not.
  const passwordHash = await hashPassword(password);
  await withServiceDatabase(config, 'reset-password', output, async (dataSource) => {
    const { users, audit } = tablesOf(dataSource, output);
    await audit.act(
      ACTOR,
      'user.password_reset',
      username,
      async () => {
        const user = await users.findByUsername(username);
        if (!user) throw noSuchUser(username);
        await users.setPasswordHash(user.id, passwordHash);
      },
      () => ({ target: username, details: { via: 'drey users reset-password' } }),
    );
  });
  if (generated) printPassword(output, username, password);
  else output.out(`The password of "${username}" is set.`);
}

/**
 * A `--user-field name=value` text as the field's type, strictly: a text that is not of the type is kept
 * as text, so that the users rules refuse it with the API's message rather than read it as something else.
 */
function fieldValue(field: UserField, text: string): UserFieldValue {
  switch (field.type) {
    case 'integer':
    case 'number':
      return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text) ? Number(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'string':
      return text;
  }
}

function givenFields(fields: UserField[], given: Record<string, string>) {
  const values: Record<string, UserFieldValue> = {};
  for (const [name, text] of Object.entries(given)) {
    const field = fields.find((candidate) => candidate.name === name);
    // The API ignores keys that are not fields (clients send form state); on a command line it is a typo.
    if (!field) {
      const known = fields.map((candidate) => candidate.name).join(', ') || 'none';
      throw new InvalidUserError(`"${name}" is not a user field of the project (it has: ${known})`);
    }
    values[name] = fieldValue(field, text);
  }
  return values;
}

/** The project's user fields, as the server that serves the same PROJECT_DIR (or --project) knows them. */
function projectUserFields(config: AppConfig, args: CliArgs): UserField[] {
  return loadProject(args.project ? resolve(args.project) : config.projectDir).userFields;
}

/**
 * `users add <name>`: adds a user as `POST P/users` does (the same rules for the name, the fields and the
 * password), audited with actor `cli`; prints a generated password once.
 */
async function addUser(config: AppConfig, args: CliArgs, output: CliOutput): Promise<void> {
  const fields = projectUserFields(config, args);
  const { password, generated } = await newPassword(config, args, output);
  const input = parseNewUser(
    {
      ...givenFields(fields, args.userFields),
      username: args.username,
      password,
      is_admin: args.admin,
    },
    fields,
  );
  const passwordHash = await hashPassword(input.password);
  await withServiceDatabase(config, 'users add', output, async (dataSource) => {
    const { users, audit } = tablesOf(dataSource, output);
    await insertUser(audit, users, ACTOR, input, passwordHash, 'drey users add');
  });
  output.out(`Added user "${input.username}"${input.isAdmin ? ', an administrator' : ''}.`);
  if (generated) printPassword(output, input.username, password);
}

function column(name: string, type: ResultColumn['type']): ResultColumn {
  return { name, type, databaseType: type };
}

/**
 * `users list`: every user, oldest first, with whether failed logins lock them now and for how long, then
 * the project's user fields as `GET P/users` shows them. Audited (actor `cli`): it reads what the API shows
 * to signed-in users only.
 */
async function listUsers(config: AppConfig, args: CliArgs, output: CliOutput): Promise<void> {
  const fields = projectUserFields(config, args);
  const rows = await withServiceDatabase(config, 'users list', output, async (dataSource) => {
    const { users, failures, audit } = tablesOf(dataSource, output);
    const all = await users.listByCreation();
    const recent = await failures.countRecent(
      all.map((user) => userKey(user.username)),
      config.loginWindowSeconds,
    );
    const limits = {
      maxFailures: config.loginMaxFailures,
      maxFailuresPerAddress: config.loginMaxFailuresPerAddress,
      windowSeconds: config.loginWindowSeconds,
    };
    const now = Date.now();
    await audit.record({
      action: 'user.list',
      actor: ACTOR,
      details: { users: all.length, via: 'drey users list' },
    });
    return all.map((user): JsonValue[] => {
      const key = userKey(user.username);
      const lockout = lockoutOf(
        recent.filter((row) => row.key === key),
        limits,
        now,
      );
      const values = withFieldDefaults(user.fields, fields);
      return [
        user.username,
        user.isAdmin,
        lockout !== undefined,
        lockout?.retryAfterSeconds ?? null,
        ...fields.map((field) => values[field.name]),
      ];
    });
  });
  const columns = [
    column('username', 'string'),
    column('is_admin', 'boolean'),
    column('locked', 'boolean'),
    column('locked_for_seconds', 'integer'),
    ...fields.map((field) => column(field.name, field.type)),
  ];
  for (const line of formatRows({ columns, rows }, args.format)) output.out(line);
}

/**
 * `users unlock <name>`: forgets the user's failed logins, which lifts their lock on every server process
 * (the same as `DELETE P/users/{name}/lockout`), audited with actor `cli`.
 */
async function unlockUser(config: AppConfig, args: CliArgs, output: CliOutput): Promise<void> {
  const username = args.username ?? '';
  const forgotten = await withServiceDatabase(
    config,
    'users unlock',
    output,
    async (dataSource) => {
      const { users, failures, audit } = tablesOf(dataSource, output);
      return audit.act(
        ACTOR,
        'user.unlock',
        username,
        async () => {
          if (!(await users.findByUsername(username))) throw noSuchUser(username);
          return failures.forget(userKey(username));
        },
        (count) => ({
          target: username,
          details: { failures_forgotten: count, via: 'drey users unlock' },
        }),
      );
    },
  );
  output.out(
    forgotten === 0
      ? `"${username}" had no failed logins: nothing to lift.`
      : `"${username}" may log in again (${forgotten} failed login${forgotten === 1 ? '' : 's'} forgotten).`,
  );
}
