import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AuditService } from '@/audit/audit.service';
import type { AdminCaller } from '@/core/caller';
import { DomainError } from '@/core/errors';
import { JsonLogger } from '@/runtime/json-logger';
import { SECRETS, Secrets } from '@/config/secrets';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { checkNewPassword } from '@/core/users/password-policy';
import { userKey } from '@/core/users/login-lockout';
import { LoginFailuresRepository } from '@/database/tables/login-failures.repository';
import { ServedProject } from '@/core/project/served-project';
import { addUser } from '@/users/add-user';
import { hashPassword, verifyPassword } from '@/users/passwords';
import { parseNewUser, parseUserUpdate, withFieldDefaults } from '@/users/user-fields.rules';
import type { User } from '@/database/tables/users.entity';
import { UsersRepository } from '@/database/tables/users.repository';
import { TokenRecords } from '@/database/token-records/token-records';

export const ADMIN = 'admin';

@Injectable()
export class UsersService implements OnApplicationBootstrap {
  constructor(
    private readonly users: UsersRepository,
    private readonly served: ServedProject,
    @Inject(SECRETS) private readonly secrets: Secrets,
    private readonly logger: JsonLogger,
    private readonly audit: AuditService,
    private readonly loginFailures: LoginFailuresRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokenRecords: TokenRecords,
  ) {}

  /**
   * Whether this start created the `admin` user (with the configured password): the start-up summary shows
   * a generated password only then, since an existing admin keeps its own.
   */
  adminCreated = false;

  /** Why the configured admin password is not the admin user's, when it is not (the summary repeats it). */
  adminPasswordNotApplied?: string;

  /** The `admin` user exists from start-up, with ADMIN_PASSWORD, and is always an administrator. */
  async onApplicationBootstrap(): Promise<void> {
    const passwordHash = await hashPassword(this.secrets.adminPassword);
    // Several processes may start at once; an existing admin keeps its password.
    this.adminCreated = await this.users.insertIfNameFree({
      username: ADMIN,
      isAdmin: true,
      passwordHash,
      fields: withFieldDefaults({}, this.served.current.userFields),
    });
    await this.users.setAdmin(ADMIN, true);
    await this.tokenRecords.changed();
    // Only a password the operator set (ADMIN_PASSWORD) can be "not applied": the one kept in secrets.json
    // is the service's own, generated once and shown when it created the admin, and an admin whose password
    // differs from it changed it (the tutorial's flow: ADMIN_PASSWORD at the first start, none later), which
    // is nothing to act on at every start.
    if (this.adminCreated || !this.secrets.adminPasswordFromEnvironment) return;
    if (await this.checkPassword(ADMIN, this.secrets.adminPassword)) return;
    // The configured password sets the one the admin user is created with; afterwards the stored one rules
    // (changed through the API or `drey users reset-password`), and a database restored from a copy keeps
    // the password it had. Say so rather than let the operator try a password that does not work.
    this.adminPasswordNotApplied =
      'ADMIN_PASSWORD was not applied: the admin user exists already, with another password ' +
      '(ADMIN_PASSWORD applies only when that user is created). To set it now: npm run drey -- users ' +
      'reset-password admin, or unset ADMIN_PASSWORD to silence this warning';
    this.logger.emit('warn', this.adminPasswordNotApplied);
  }

  findByUsername(username: string): Promise<User | null> {
    return this.users.findByUsername(username);
  }

  /** The user if the password is right; null otherwise (unknown users take as long as wrong passwords). */
  async checkPassword(username: string, password: string): Promise<User | null> {
    const user = await this.findByUsername(username);
    const ok = await verifyPassword(user?.passwordHash ?? null, password);
    return ok && user ? user : null;
  }

  list(): Promise<User[]> {
    return this.users.listByCreation();
  }

  fieldsOf(user: User) {
    return withFieldDefaults(user.fields, this.served.current.userFields);
  }

  async create(caller: AdminCaller, body: unknown): Promise<void> {
    const input = parseNewUser(body, this.served.current.userFields);
    checkNewPassword(input.password, this.config.passwordMinLength, 'Field "password"');
    const passwordHash = await hashPassword(input.password);
    await addUser(this.audit, this.users, caller.username, input, passwordHash);
    this.logger.emit('info', 'user created', { actor: caller.username, username: input.username });
  }

  async update(caller: AdminCaller, username: string, body: unknown): Promise<void> {
    const change = parseUserUpdate(body, this.served.current.userFields, username);
    const user = await this.findByUsername(username);
    if (!user) throw new UserNotFoundError(username);
    if (username === ADMIN && change.isAdmin === false) {
      throw new InvalidUserOperationError('The user "admin" is always an administrator');
    }
    await this.audit.act(
      caller.username,
      'user.update',
      username,
      () =>
        this.users.updateProfile(user.id, change.isAdmin ?? user.isAdmin, {
          ...user.fields,
          ...change.fields,
        }),
      () => ({ target: username, details: { is_admin: change.isAdmin, fields: change.fields } }),
    );
    // Committed: every process's next request sees the user's new rights and fields.
    await this.tokenRecords.changed();
    this.logger.emit('info', 'user updated', { actor: caller.username, username });
  }

  /** Deleting a user deletes their tokens with them (foreign key cascade), at once. */
  async delete(caller: AdminCaller, username: string): Promise<void> {
    if (username === ADMIN)
      throw new InvalidUserOperationError('The user "admin" cannot be deleted');
    if (username === caller.username)
      throw new InvalidUserOperationError('You cannot delete yourself');
    await this.audit.act(caller.username, 'user.delete', username, async () => {
      if (!(await this.users.deleteByUsername(username))) throw new UserNotFoundError(username);
    });
    await this.tokenRecords.changed();
    this.logger.emit('info', 'user deleted', { actor: caller.username, username });
  }

  /**
   * Lifts the lock that failed logins put on a username (LOGIN_MAX_FAILURES), on every process at once:
   * the failures are in Postgres. A lock on a client address is not the user's and stays until it ends.
   */
  async unlock(caller: AdminCaller, username: string): Promise<void> {
    await this.audit.act(
      caller.username,
      'user.unlock',
      username,
      async () => {
        if (!(await this.findByUsername(username))) throw new UserNotFoundError(username);
        return this.loginFailures.forget(userKey(username));
      },
      (forgotten) => ({ target: username, details: { failures_forgotten: forgotten } }),
    );
    this.logger.emit('info', 'user unlocked', { actor: caller.username, username });
  }

  /** The policy first: a refused new password costs no hashing of the old one. */
  async changePassword(user: User, oldPassword: string, newPassword: string): Promise<void> {
    checkNewPassword(newPassword, this.config.passwordMinLength, 'The new password');
    if (!(await verifyPassword(user.passwordHash, oldPassword))) {
      throw new DomainError('invalid_password', 'The old password is not correct');
    }
    await this.users.setPasswordHash(user.id, await hashPassword(newPassword));
  }
}

export class UserNotFoundError extends DomainError {
  constructor(username: string) {
    super('user_not_found', `No user named "${username}"`);
  }
}

export class InvalidUserOperationError extends DomainError {
  constructor(message: string) {
    super('invalid_user_operation', message);
  }
}
