import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { LodeConfig } from '../config/lode-config';

interface Scope {
  manager: EntityManager;
  open: boolean;
}

const scope = new AsyncLocalStorage<Scope>();

/** The transaction the caller runs in (its EntityManager), while it is open. */
export function currentTransaction(): EntityManager | undefined {
  const s = scope.getStore();
  return s?.open ? s.manager : undefined;
}

/** Runs `work` as inside the transaction of `manager`: for `currentTransaction` and embedded routing. */
export async function inTransactionScope<T>(manager: EntityManager, work: () => Promise<T>): Promise<T> {
  const s: Scope = { manager, open: true };
  try {
    return await scope.run(s, work);
  } finally {
    // Work it started and left running (a callback fired later) must not reach a finished transaction.
    s.open = false;
  }
}

/**
 * On the embedded database, a query made through the DataSource while its caller is inside a
 * transaction runs on that transaction's connection. The one session belongs to the transaction
 * until it ends, so a query on another connection (a read model another context is asked for in
 * the middle of a decision, say) would wait for it forever. There it sees what the transaction has
 * written so far; on a PostgreSQL server nothing is routed and such a read sees what is committed.
 * A transaction begun inside one becomes a savepoint of it.
 */
@Injectable()
export class EmbeddedTransactionRouting implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly config: LodeConfig,
  ) {}

  onModuleInit(): void {
    if (this.config.embeddedDatabase) routeIntoTransactions(this.dataSource);
  }
}

export function routeIntoTransactions(dataSource: DataSource): void {
  const transaction = dataSource.transaction.bind(dataSource) as (...args: unknown[]) => Promise<unknown>;
  dataSource.transaction = ((...args: unknown[]) => {
    const at = args.findIndex((a) => typeof a === 'function');
    const work = args[at] as (manager: EntityManager) => Promise<unknown>;
    const scoped = [...args];
    scoped[at] = (manager: EntityManager) => inTransactionScope(manager, () => work(manager));
    return transaction(...scoped);
  }) as DataSource['transaction'];

  const query = dataSource.query.bind(dataSource);
  dataSource.query = ((sql: string, parameters?: unknown[], runner?: QueryRunner) => {
    const manager = runner ? undefined : currentTransaction();
    return manager ? manager.query(sql, parameters) : query(sql, parameters, runner);
  }) as DataSource['query'];

  const createQueryRunner = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = ((mode?: 'master' | 'slave') => {
    const runner = currentTransaction()?.queryRunner;
    if (!runner || runner.isReleased) return createQueryRunner(mode);
    // Borrowed: the transaction's owner releases it, whoever else is handed it.
    return new Proxy(runner, {
      get: (target, key, receiver) =>
        key === 'release' ? async () => undefined : (Reflect.get(target, key, receiver) as unknown),
    });
  }) as DataSource['createQueryRunner'];
}
