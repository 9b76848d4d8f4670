import { Client } from 'pg';
import { startPostgres, type PostgresServer } from './postgres-process';

// A database of a test file's own in the cluster the whole jest run shares (spec/global-setup.ts
// starts it and names it in FW_TEST_POSTGRES): `CREATE DATABASE` costs milliseconds where a
// cluster of its own costs seconds. Files stay independent: each has its own databases, and
// Postgres keeps tables, locks (advisory ones included) and sessions per database. A test that
// stops, kills or reconfigures Postgres needs a cluster of its own: `startPostgres()`.

/** The shared cluster's address, as spec/global-setup.ts hands it to the workers. */
export const SHARED_POSTGRES = 'FW_TEST_POSTGRES';

/** A test file's own databases in the shared cluster; `stop()` drops them. */
export interface PostgresDatabase {
  /** The shared cluster's port. */
  readonly port: number;
  /** The URL of this file's own database. */
  readonly url: string;
  /** The URL of database `name`, made by `createDatabase(name)` (its real name carries this file's prefix). */
  urlOf(name: string): string;
  /** Creates another database of this file's own, reached by `urlOf(name)`. */
  createDatabase(name: string): Promise<void>;
  /** Drops this file's databases (`WITH (FORCE)`: sessions still open are ended, as a stopped server would). Safe to call twice. */
  stop(): Promise<void>;
}

let made = 0;

/**
 * A database of this file's own in the run's shared cluster; without one (jest run with another
 * config, or a script), a cluster of its own that `stop()` stops.
 *
 * @example
 * let db: PostgresDatabase;
 * beforeAll(async () => (db = await postgresDatabase()));
 * afterAll(() => db?.stop());
 * // new PgStore({ connectionString: db.url })
 */
export async function postgresDatabase(): Promise<PostgresDatabase> {
  const shared = process.env[SHARED_POSTGRES];
  if (shared === undefined || shared === '') return ownCluster(await startPostgres());
  const port = Number(shared);
  const prefix = `t${process.env.JEST_WORKER_ID ?? 0}_${process.pid}_${++made}`;
  const real = (name: string): string => `${prefix}_${name}`.toLowerCase();
  const admin = (): string => `postgres://postgres@127.0.0.1:${port}/postgres`;
  const names: string[] = [];
  const create = async (name: string): Promise<void> => {
    await sql(admin(), `CREATE DATABASE "${real(name)}"`);
    names.push(real(name));
  };
  await create('main');
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/${real('main')}`,
    urlOf: (name) => `postgres://postgres@127.0.0.1:${port}/${real(name)}`,
    createDatabase: create,
    async stop() {
      for (const name of names.splice(0))
        await sql(admin(), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

/** One statement on a connection of its own (CREATE and DROP DATABASE cannot run in a transaction). */
async function sql(url: string, statement: string): Promise<void> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function ownCluster(server: PostgresServer): PostgresDatabase {
  return {
    port: server.port,
    url: server.url,
    urlOf: (name) => server.urlOf(name),
    createDatabase: (name) => server.createDatabase(name),
    stop: () => server.stop(),
  };
}
