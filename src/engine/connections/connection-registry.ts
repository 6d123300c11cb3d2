import type { ExternalConnection } from '@/engine/connections/external-connection';
import { PostgresConnection } from '@/engine/connections/postgres-connection';
import type { ConnectionSpec } from '@/core/project/project';

/** Environment variables, passed in: only the config module and the CLI read process.env. */
export type Env = Readonly<Record<string, string | undefined>>;

export interface ConnectionOptions {
  /** Connections per Postgres pool (an embedded PGlite serves one at a time). */
  postgresPoolSize: number;
}

function urlFrom(spec: ConnectionSpec, env: Env): () => string {
  return () => {
    const url = env[spec.urlEnv]?.trim();
    if (!url) {
      throw new Error(
        `connection "${spec.name}" needs its URL in the environment variable ${spec.urlEnv}`,
      );
    }
    return url;
  };
}

/** The one place that knows the kinds of connection: a new kind is a new case here and its class. */
function createConnection(
  spec: ConnectionSpec,
  env: Env,
  options: ConnectionOptions,
): ExternalConnection {
  switch (spec.kind) {
    case 'postgres':
      return new PostgresConnection(spec.name, urlFrom(spec, env), options.postgresPoolSize);
  }
}

/** The project's external connections, opened lazily on first use. */
export class ExternalConnections {
  private readonly connections = new Map<string, ExternalConnection>();

  constructor(
    private readonly specs: readonly ConnectionSpec[],
    private readonly env: Env,
    private readonly options: ConnectionOptions,
  ) {}

  get(name: string): ExternalConnection {
    let connection = this.connections.get(name);
    if (!connection) {
      const spec = this.specs.find((candidate) => candidate.name === name);
      if (!spec) throw new Error(`no connection named "${name}"`);
      connection = createConnection(spec, this.env, this.options);
      this.connections.set(name, connection);
    }
    return connection;
  }

  /** Environment variables the project's connections need but that are not set, for a start-up check. */
  missingVariables(): string[] {
    return this.specs.filter((spec) => !this.env[spec.urlEnv]?.trim()).map((spec) => spec.urlEnv);
  }

  async close(): Promise<void> {
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(open.map((connection) => connection.close()));
  }
}
