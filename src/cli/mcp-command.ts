import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '@/app.module';
import { CallerResolver } from '@/auth/caller-resolver';
import type { Credential } from '@/auth/credentials';
import type { CliOutput } from '@/cli/cli-output';
import type { AppConfig } from '@/config/config';
import { resolveSecrets } from '@/config/secrets';
import { startEmbeddedPostgres } from '@/database/embedded/embedded-postgres';
import { JsonLogger } from '@/runtime/json-logger';
import { McpService } from '@/mcp/mcp.service';
import { ServedProject } from '@/core/project/served-project';
import { holderAlive, readLock } from '@/database/embedded/embedded-lock';
import { relayMcp, type RunningServer, type Stdio } from '@/cli/mcp-relay';
import { publishedBy } from '@/cli/service-database';
import type { McpServer } from '@modelcontextprotocol/server';

/**
 * `drey mcp`: the MCP server of `P/mcp` over standard input and output, for a desktop assistant that
 * starts it. The application is the service's, without HTTP: the same modules, database, builds and
 * cache, as one more process of the service (with Redis, a replica beside `npm start`; with the embedded
 * database, the one process that opens it). Beside a server on the embedded database, which must stay the
 * only process to open it, it relays stdio to that server's MCP endpoint instead (mcp-relay.ts). It signs in
 * with DREY_TOKEN, a named token of the service's users, checked at the start and again at every tool call.
 * Standard output carries the protocol only: the log goes to standard error. Resolves when the assistant
 * closes standard input.
 */
export async function mcpCommand(config: AppConfig, output: CliOutput): Promise<void> {
  const token = config.mcpToken;
  if (token === undefined) {
    throw new Error(
      'drey mcp signs in with a named token: set DREY_TOKEN (create one with POST P/tokens, see docs/mcp.md)',
    );
  }
  if (!config.databaseUrl) {
    // Beside a server on the embedded database (npm start, drey dev), which is the one process that may
    // open it: through that server's MCP endpoint.
    const server = await runningServer(config.dataDir);
    if (server) return relayMcp(server, token, output);
  }
  const logger = new JsonLogger(config.logLevel, (line) => process.stderr.write(`${line}\n`));
  if (!config.databaseUrl) {
    await startEmbeddedPostgres(config.dataDir, { command: 'mcp' });
  }
  const app = await NestFactory.createApplicationContext(
    AppModule.forRoot(config, logger, resolveSecrets(config)),
    { logger, abortOnError: false },
  );
  try {
    // The door of stdio: DREY_TOKEN is a bearer token, resolved as an HTTP request's would be.
    const resolver = app.get(CallerResolver);
    const credential: Credential = { kind: 'bearer', token };
    const caller = await resolver.resolve(credential).catch((error: unknown) => {
      throw new Error(
        `DREY_TOKEN was refused (${error instanceof Error ? error.message : String(error)})`,
      );
    });
    output.err(`drey mcp: serving ${caller.username ?? 'anonymous'} over stdio`);
    const mcp = app.get(McpService);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { serveStdio } = require('@modelcontextprotocol/server/stdio') as Stdio;
    const ended = new Promise<void>((resolve) => process.stdin.once('close', resolve));
    // A 2025-era connection keeps one server: when this process follows a build, its tools are worked
    // out again and the client is told (tools/list_changed). A 2026-07-28 client re-lists on its own.
    const pinned = new Set<McpServer>();
    const handle = serveStdio(
      async ({ era }) => {
        const server = await mcp.serverFor(
          caller,
          () => resolver.resolve(credential),
          undefined,
          'stdio',
        );
        if (era === 'legacy') pinned.add(server);
        return server;
      },
      { onerror: (error) => logger.emit('warn', 'mcp stdio', { error: error.message }) },
    );
    const unsubscribe = app.get(ServedProject).onReplace(() => {
      for (const server of pinned) {
        mcp.refresh(server).catch((error: unknown) =>
          logger.emit('warn', 'mcp stdio refresh', {
            error: error instanceof Error ? error.message : String(error),
          }),
        );
      }
    });
    await ended;
    unsubscribe();
    await handle.close();
  } finally {
    await app.close();
  }
}

/**
 * The server holding this data folder's embedded database, once it listens; undefined when none does, or
 * when the holder is not a server (another command line), which opening the database then names.
 */
async function runningServer(dataDir: string): Promise<RunningServer | undefined> {
  const found = readLock(dataDir);
  if (!found || found.command !== 'server' || !holderAlive(found)) return undefined;
  const holder = await publishedBy(dataDir, found, 'http');
  if (holder?.http === undefined || holder.prefix === undefined) return undefined;
  return { pid: holder.pid, origin: holder.http, prefix: holder.prefix };
}
