import { randomBytes } from 'node:crypto';
import type { CliArgs } from '@/cli/cli-args';
import type { CliOutput } from '@/cli/drey';
import type { AppConfig } from '@/config/config';
import { openServiceDatabase } from '@/cli/service-database';
import { AuditEventsRepository } from '@/database/tables/audit-events.repository';
import { UsersRepository } from '@/database/tables/users.repository';
import { hashPassword } from '@/users/passwords';

const MIN_LENGTH = 8;

/**
 * `users reset-password <name>`: sets the password in the service's database (service-database.ts: beside a
 * running server, through its database), records it in the audit log (actor `cli`), and prints a generated
 * password once.
 */
export async function resetPassword(
  config: AppConfig,
  args: CliArgs,
  output: CliOutput,
): Promise<void> {
  const username = args.username ?? '';
  let password: string;
  if (args.passwordStdin) {
    if (!output.readInput) throw new Error('--password-stdin: there is no standard input to read');
    password = (await output.readInput()).replace(/\r?\n$/, '');
    if (password.length < MIN_LENGTH) {
      throw new Error(`the password must be at least ${MIN_LENGTH} characters long`);
    }
  } else {
    password = randomBytes(12).toString('base64url');
  }
  const database = await openServiceDatabase(config, 'drey users reset-password', output);
  try {
    const users = new UsersRepository(database.dataSource);
    const user = await users.findByUsername(username);
    if (!user) throw new Error(`there is no user "${username}"`);
    await users.setPasswordHash(user.id, await hashPassword(password));
    await new AuditEventsRepository(database.dataSource).append({
      action: 'user.password_reset',
      actor: 'cli',
      target: username,
      outcome: 'success',
      clientAddress: null,
      requestId: null,
      details: { via: 'drey users reset-password' },
    });
  } finally {
    await database.close();
  }
  if (args.passwordStdin) {
    output.out(`The password of "${username}" is set.`);
  } else {
    output.out(`The password of "${username}" is now (shown once):`);
    output.out(`    ${password}`);
  }
}
