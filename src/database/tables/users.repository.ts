import { Injectable } from '@nestjs/common';
import { tableOf } from '@/database/transactions/transactions';
import { DataSource, Repository } from 'typeorm';
import { User } from '@/database/tables/users.entity';
import type { UserFieldValue } from '@/core/user-fields';
import { announceInTransaction } from '@/database/token-records/token-changes';

/** A new user's row; `id` and `created_at` come from the database. */
export interface NewUser {
  username: string;
  isAdmin: boolean;
  /** Null for a user who signs in through single sign-on only. */
  passwordHash: string | null;
  fields: Record<string, UserFieldValue>;
}

/** The `users` table. Rules (who may do what, which fields are valid) live in the services. */
@Injectable()
export class UsersRepository {
  /** Inside a transaction when one is open (Transactions). */
  private get users(): Repository<User> {
    return tableOf(this.dataSource, User);
  }

  constructor(private readonly dataSource: DataSource) {}

  findByUsername(username: string): Promise<User | null> {
    return this.users.findOneBy({ username });
  }

  findById(id: string): Promise<User | null> {
    return this.users.findOneBy({ id });
  }

  /** Everyone, oldest first. */
  listByCreation(): Promise<User[]> {
    return this.users.find({ order: { createdAt: 'ASC', username: 'ASC' } });
  }

  /**
   * Inserts the user unless the name is taken; true when this call created it. Atomic (ON CONFLICT), so
   * several processes may try at once.
   */
  async insertIfNameFree(user: NewUser): Promise<boolean> {
    const result = await this.users
      .createQueryBuilder()
      .insert()
      .values(user)
      .orIgnore()
      .returning(['id'])
      .execute();
    return (result.raw as unknown[]).length > 0;
  }

  async setAdmin(username: string, isAdmin: boolean): Promise<void> {
    await this.users.update({ username }, { isAdmin });
    await announceInTransaction(this.users);
  }

  async updateProfile(
    id: string,
    isAdmin: boolean,
    fields: Record<string, UserFieldValue>,
  ): Promise<void> {
    await this.users.update({ id }, { isAdmin, fields });
    await announceInTransaction(this.users);
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.users.update({ id }, { passwordHash });
  }

  /** True when a user of that name existed. Their tokens go with them (foreign key cascade). */
  async deleteByUsername(username: string): Promise<boolean> {
    const result = await this.users.delete({ username });
    const deleted = (result.affected ?? 0) > 0;
    if (deleted) await announceInTransaction(this.users);
    return deleted;
  }
}
