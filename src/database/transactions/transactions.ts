import { Injectable } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager, ObjectLiteral, Repository } from 'typeorm';

const current = new AsyncLocalStorage<EntityManager>();

/**
 * One transaction around a service's steps, without passing a manager through every call: the repositories
 * read their table through {@link tableOf}, which answers the open transaction's manager while one runs.
 * Used where an action and its audit row must commit together (pgaudit's rule: the audit is written in
 * the statement's own transaction), so a refused write leaves no row and an answered one always has its
 * audit row. TypeORM has no such context of its own; typeorm-transactional, which adds one, patches
 * TypeORM's prototypes and is not released for TypeORM 1.
 */
@Injectable()
export class Transactions {
  constructor(private readonly dataSource: DataSource) {}

  /** Runs `work` in a transaction (joining the one already open); commits when it resolves. */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (current.getStore()) return work();
    return this.dataSource.transaction((manager) => current.run(manager, work));
  }

  /** Runs `work` on the pool, outside the transaction open around the caller, if any. */
  outside<T>(work: () => Promise<T>): Promise<T> {
    return current.exit(work);
  }
}

/** The table's repository, inside the open transaction when there is one. */
export function tableOf<Entity extends ObjectLiteral>(
  dataSource: DataSource,
  entity: new () => Entity,
): Repository<Entity> {
  return (current.getStore() ?? dataSource.manager).getRepository(entity);
}
