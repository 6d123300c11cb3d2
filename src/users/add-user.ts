import type { AuditService } from '@/audit/audit.service';
import type { UsersRepository } from '@/database/tables/users.repository';
import { InvalidUserError, NewUser } from '@/users/user-fields.rules';

/**
 * Adds a checked new user with its password's hash, and the audit row of it, in one transaction: what
 * `POST P/users` and `drey users add` both do (`via` names the command line in the audit row). A name in
 * use is refused (400), and audited as a failure like any refusal.
 */
export async function addUser(
  audit: AuditService,
  users: UsersRepository,
  actor: string | null,
  input: NewUser,
  passwordHash: string,
  via?: string,
): Promise<void> {
  await audit.act(
    actor,
    'user.create',
    input.username,
    async () => {
      const created = await users.insertIfNameFree({
        username: input.username,
        isAdmin: input.isAdmin,
        passwordHash,
        fields: input.fields,
      });
      if (!created) throw new InvalidUserError(`User "${input.username}" already exists`);
    },
    () => ({
      target: input.username,
      details: { is_admin: input.isAdmin, fields: input.fields, ...(via ? { via } : {}) },
    }),
  );
}
