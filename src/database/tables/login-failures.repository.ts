import { Injectable } from '@nestjs/common';
import { DataSource, Repository } from 'typeorm';
import { tableOf } from '@/database/transactions/transactions';
import { LoginFailure } from '@/database/tables/login-failures.entity';

/** Failures of one key within the window. */
export interface RecentFailures {
  key: string;
  failures: number;
  oldest: Date;
}

/** The `login_failures` table: failed logins by key (`user:<name>`, `addr:<address>`), across processes. */
@Injectable()
export class LoginFailuresRepository {
  /** Inside a transaction when one is open (Transactions): lifting a lock commits with its audit row. */
  private get failures(): Repository<LoginFailure> {
    return tableOf(this.dataSource, LoginFailure);
  }

  constructor(private readonly dataSource: DataSource) {}

  /** Per key, the failures of the last `windowSeconds` (keys without any are left out). */
  async countRecent(keys: string[], windowSeconds: number): Promise<RecentFailures[]> {
    const rows = await this.failures
      .createQueryBuilder('f')
      .select('f.key', 'key')
      .addSelect('count(*)', 'failures')
      .addSelect('min(f.failed_at)', 'oldest')
      .where('f.key = ANY(:keys)', { keys })
      .andWhere('f.failed_at > now() - make_interval(secs => :window)', { window: windowSeconds })
      .groupBy('f.key')
      .getRawMany<{ key: string; failures: string; oldest: Date | string }>();
    return rows.map((row) => ({
      key: row.key,
      failures: Number(row.failures),
      oldest: new Date(row.oldest),
    }));
  }

  /** One failure for each key, now. */
  async add(keys: string[]): Promise<void> {
    await this.failures.insert(keys.map((key) => ({ key })));
  }

  /** Forgets every failure of the key (an administrator lifts a lock); how many there were. */
  async forget(key: string): Promise<number> {
    const result = await this.failures.delete({ key });
    return result.affected ?? 0;
  }

  /** Forgets the key's failures, and everyone's that are older than the window. */
  async clear(key: string, windowSeconds: number): Promise<void> {
    await this.failures
      .createQueryBuilder()
      .delete()
      .where('key = :key', { key })
      .orWhere('failed_at < now() - make_interval(secs => :window)', { window: windowSeconds })
      .execute();
  }
}
