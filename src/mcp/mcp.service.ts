import { Injectable, OnModuleDestroy } from '@nestjs/common';
import {
  AuthInfo,
  CallToolResult,
  Implementation,
  JSONRPCMessage,
  JSONRPCRequest,
  McpHttpHandler,
  McpServer,
  McpServerOptions,
  ServerContext,
  StandardSchemaWithJSON,
  Transport,
  createMcpHandler,
  fromJsonSchema,
} from '@modelcontextprotocol/server';
import { Counter } from 'prom-client';
import { ANONYMOUS, Caller, auditActor } from '@/core/caller';
import { AuditService } from '@/audit/audit.service';
import { MetricsService } from '@/metrics/metrics.service';
import { describeError, renderCurrent } from '@/http/errors/error-mapping';
import { JsonLogger } from '@/runtime/json-logger';
import { ServedProject } from '@/core/project/served-project';
import { SERVICE_VERSION } from '@/config/service-version';
import {
  JsonSchema,
  LOOSE_INPUTS,
  OUTPUTS,
  TOOL_NAMES,
  ToolName,
  ToolSubjects,
  offeredTools,
  dashboardInput,
  datasetExportInput,
  datasetParametersInput,
  datasetRowsInput,
  queryModelsInput,
} from '@/mcp/mcp-schemas';
import { McpTools, callSubject } from '@/mcp/mcp-tools';
import { McpFileTools } from '@/mcp/mcp-file-tools';
import { checkArguments, objectOf } from '@/mcp/mcp-arguments';
import { SdkRefusal, ToolCallWatch } from '@/mcp/tool-call-watch';
import { ServerPool } from '@/mcp/server-pool';
import type { ErrorCode } from '@/core/errors';

/** What the HTTP face hands the SDK as `authInfo`: the caller the bearer guard found, and its address. */
const CALLER_KEY = 'drey:caller';
const ADDRESS_KEY = 'drey:address';
/** The origin (scheme and Host) the MCP request reached, for the links a tool answers. */
const BASE_KEY = 'drey:base';

/**
 * Who makes a call, from the `authInfo` the SDK hands the call's handler (over HTTP, the request's: see
 * {@link McpService.authInfo}); a server that serves one caller may ignore it.
 */
type CallerOf = (auth: AuthInfo | undefined) => Promise<Caller>;

/** Servers kept for {@link McpService.answer}: a few per caller view, as many as calls run at once. */
const POOLED_SERVERS = 32;

/** The tools only read: an assistant may call them freely and again. */
const READ_ONLY = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false,
};

const OUTPUT_SCHEMAS = Object.fromEntries(
  Object.entries(OUTPUTS).map(([name, schema]) => [name, fromJsonSchema(schema)]),
) as Record<ToolName, StandardSchemaWithJSON>;

/**
 * A tool's input as listed (`advertised`: the caller's enums, options and bounds). The SDK's check lets
 * every input through: the tool's handler checks it (mcp-arguments.ts), where a refusal is audited,
 * counted and named by its argument, and a value outside the advertised ones is refused by the service
 * with the HTTP endpoint's code and message rather than by a schema error.
 */
function inputOf(advertised: () => JsonSchema): StandardSchemaWithJSON {
  return {
    '~standard': {
      version: 1,
      vendor: 'drey',
      validate: (value: unknown) => ({ value }),
      // Read at every tools/list: a server that lives on (stdio) lists what its refreshed subjects say.
      jsonSchema: { input: advertised, output: advertised },
    },
  };
}

/** An MCP server whose tools/call requests are watched on every transport it connects to. */
class WatchedMcpServer extends McpServer {
  constructor(
    info: Implementation,
    options: McpServerOptions,
    readonly watch: ToolCallWatch,
  ) {
    super(info, options);
  }

  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    this.watch.watch(transport);
  }
}

/**
 * The Model Context Protocol server: the project's catalog, parameters, rows, dashboards and, for
 * administrators, query-models as tools (`mcp-tools.ts`), for one caller at a time. Stateless: the SDK's
 * handler builds a server per HTTP request (per connection over stdio) from {@link serverFor}, for clients
 * of the 2026-07-28 revision and, through its stateless fallback, of the 2025 ones, so any replica answers.
 * A 2025-era POST that asks for no progress is served by McpHttp instead, from the same {@link serverFor},
 * on the SDK's transport answering in one JSON body (mcp-http.ts, answerInJson).
 */
@Injectable()
export class McpService implements OnModuleDestroy {
  /** Served at `P/mcp` and `/mcp` (McpController) through the application's pipeline. */
  readonly handler: McpHttpHandler;
  private readonly calls: Counter<'tool' | 'outcome'>;
  private readonly unsubscribe: () => void;
  private readonly refreshers = new WeakMap<McpServer, () => Promise<void>>();
  private readonly pool = new ServerPool<object>(POOLED_SERVERS);

  constructor(
    private readonly tools: McpTools,
    private readonly files: McpFileTools,
    private readonly audit: AuditService,
    private readonly served: ServedProject,
    private readonly logger: JsonLogger,
    metrics: MetricsService,
  ) {
    this.calls = new Counter({
      name: 'drey_mcp_tool_calls_total',
      help: 'MCP tool calls by tool and outcome (success, or the error code of a refusal)',
      labelNames: ['tool', 'outcome'],
      registers: [metrics.registry],
    });
    this.handler = createMcpHandler(
      (context) =>
        this.serverFor(callerOfAuth(context.authInfo), undefined, addressOfAuth(context.authInfo)),
      {
        onerror: (error) =>
          this.logger.emit('warn', 'mcp request refused', { error: error.message }),
      },
    );
    // A build that changes the project changes the tools (their enums, options, bounds): clients that
    // listen (`subscriptions/listen`) are told to list them again. Every replica replaces its project when
    // it follows a build (EnvironmentSync, within a second), so each tells its own listeners: the SDK's
    // in-process event bus is enough, and a shared one would tell every listener once per replica.
    this.unsubscribe = this.served.onReplace(() => {
      this.pool.clear();
      this.handler.notify.toolsChanged();
      this.handler.notify.resourcesChanged();
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.unsubscribe();
    this.pool.clear();
    await this.handler.close();
  }

  /**
   * `authInfo` for the SDK's handler, carrying the caller, the client's address and the origin the
   * request reached (`https://drey.example.com`), which links a tool answers start with.
   */
  static authInfo(caller: Caller, address?: string, base?: string) {
    return {
      token: '',
      clientId: caller.username ?? 'anonymous',
      scopes: [],
      extra: { [CALLER_KEY]: caller, [ADDRESS_KEY]: address, [BASE_KEY]: base },
    };
  }

  /**
   * A 2025-era request other than `initialize`, answered by a server kept for the caller's view (its
   * tools are the same for every caller of that view, ToolSubjects) rather than one built per request:
   * the caller and the client's address travel with the request as its `authInfo`, and each call reads
   * them from there (McpHttp decides which requests come here; ServerPool keeps the servers).
   */
  async answer(
    caller: Caller,
    address: string,
    message: JSONRPCRequest,
    base?: string,
  ): Promise<JSONRPCMessage> {
    const subjects = await this.tools.subjects(caller);
    return this.pool.exchange(
      subjects,
      () =>
        Promise.resolve(
          this.build(caller, subjects, (auth) => Promise.resolve(callerOfAuth(auth))),
        ),
      message,
      McpService.authInfo(caller, address, base),
    );
  }

  /**
   * A server for one caller: the tools and the resource that caller may use. `current` gives the caller
   * of each call: over HTTP the request's (a server serves one request); over stdio, where one server
   * serves the whole connection, the token checked again, so that a revocation is seen at the next call.
   * `address` is the client's over HTTP (whose query slots an anonymous caller's uncached reads take);
   * none over stdio. Over stdio, dataset_export is not offered: its link is to the HTTP service, whose
   * address a process started by a desktop assistant does not know.
   */
  async serverFor(
    caller: Caller,
    current: () => Promise<Caller> = () => Promise.resolve(caller),
    address?: string,
    over: 'http' | 'stdio' = 'http',
  ): Promise<McpServer> {
    return this.build(caller, await this.tools.subjects(caller), current, address, over);
  }

  /**
   * A server with the tools of `caller`'s view (`subjects`: what the tools advertise; a connection that
   * outlives a build has them worked out again, refresh). Each call is made by `current` of the call's
   * `authInfo`, from the address it carries, else `address`.
   */
  private build(
    caller: Caller,
    subjects: ToolSubjects,
    current: CallerOf,
    address?: string,
    over: 'http' | 'stdio' = 'http',
  ): McpServer {
    const project = this.served.current;
    const held = { subjects };
    const rows = this.tools.rows;
    const offered = new Set(
      offeredTools(caller).filter((tool) => over === 'http' || tool !== 'dataset_export'),
    );
    const watch = new ToolCallWatch((refusal) =>
      this.refused(() => current(refusal.authInfo), offered, refusal),
    );
    const server = new WatchedMcpServer(
      { name: 'drey', title: project.label, version: SERVICE_VERSION },
      {
        instructions:
          `${project.label}: ${project.description}. Call catalog first: it lists the datasets, dashboards, ` +
          `their parameters and columns. dataset_rows answers ${rows.default} rows unless given a limit (at most ${rows.max}), with the offset of the next page.`,
      },
      watch,
    );
    const register = (
      name: ToolName,
      title: string,
      description: string,
      advertised: (subjects: ToolSubjects) => JsonSchema,
      run: (
        caller: Caller,
        args: Record<string, unknown>,
        address?: string,
        base?: string,
      ) => Promise<CallToolResult>,
    ) => {
      if (!offered.has(name)) return;
      server.registerTool(
        name,
        {
          title,
          description,
          inputSchema: inputOf(() => advertised(held.subjects)),
          outputSchema: OUTPUT_SCHEMAS[name],
          annotations: { title, ...READ_ONLY },
        },
        (args: unknown, context: ServerContext) => {
          watch.claim(context.mcpReq.id);
          const auth = context.http?.authInfo;
          return this.call(
            () => current(auth),
            name,
            args ?? {},
            (who, checked) => run(who, checked, addressOfAuth(auth) ?? address, baseOfAuth(auth)),
          );
        },
      );
    };

    register(
      'catalog',
      'Data catalog',
      'The datasets and dashboards you may open, with their parameters (options, bounds, defaults) and columns',
      () => LOOSE_INPUTS.catalog,
      (who) => this.tools.catalog(who),
    );
    register(
      'dataset_parameters',
      "A dataset's parameters",
      "A dataset's parameters for the given selections, with cascading applied: the options of a child parameter follow its parent's selection",
      datasetParametersInput,
      (who, args) => this.tools.datasetParameters(who, args),
    );
    register(
      'dataset_rows',
      "A dataset's rows",
      `A dataset's rows for the given selections: the columns asked for, ${rows.default} rows unless a limit is given (at most ${rows.max}), from an offset. The answer says how many rows were left out and the offset of the next page`,
      (subjects) => datasetRowsInput(subjects, rows),
      (who, args, from) => this.tools.datasetRows(who, args, from),
    );
    register(
      'dataset_export',
      "A link to a dataset's full export",
      `A short-lived link (valid ${this.files.exportLinkMinutes} minutes) to every row of a dataset for the given selections, as a CSV, Parquet or Excel file, for more rows than dataset_rows answers. Anyone holding the link can download it without signing in; the answer gives the URL, its expiry and the row total`,
      datasetExportInput,
      (who, args, from, base) => this.files.datasetExport(who, args, from, base),
    );
    register(
      'dashboard',
      'A dashboard',
      over === 'http'
        ? `A dashboard rendered for the given selections: a PNG image, or with format "html" its page as text (at most ${this.files.dashboardHtmlMaxBytes} bytes; a larger page answers its URL instead)`
        : 'A dashboard rendered for the given selections, as a PNG image',
      dashboardInput,
      (who, args, _from, base) => this.files.dashboard(who, args, base),
    );
    register(
      'query_models',
      'SQL over the models',
      "For administrators: read-only SQL over the project's models, in the sandbox and time limit of query-models",
      () => queryModelsInput(rows),
      (who, args) => this.tools.queryModels(who, args),
    );
    server.registerResource(
      'catalog',
      `drey://${project.name}/catalog`,
      {
        title: `${project.label}: data catalog`,
        description: 'What the catalog tool answers, as JSON',
        mimeType: 'application/json',
      },
      async (uri, context) => {
        const auth = context.http?.authInfo;
        const result = await this.call(
          () => current(auth),
          'catalog',
          {},
          (who) => this.tools.catalog(who),
        );
        const text = result.isError
          ? (result.content[0] as { text: string }).text
          : JSON.stringify(result.structuredContent);
        return { contents: [{ uri: uri.href, mimeType: 'application/json', text }] };
      },
    );
    this.refreshers.set(server, async () => {
      held.subjects = await this.tools.subjects(await current(undefined));
      server.sendToolListChanged();
      server.sendResourceListChanged();
    });
    return server;
  }

  /**
   * For a server that serves a whole connection (stdio, 2025 revision): works its tools' enums, options
   * and bounds out again for the project now served, and tells the client that they changed.
   */
  async refresh(server: McpServer): Promise<void> {
    await this.refreshers.get(server)?.();
  }

  /**
   * One tool call: its arguments checked (mcp-arguments.ts), then run; audited (caller, tool, item,
   * selections) and counted either way, its refusal a tool error carrying the HTTP endpoint's body
   * (`{statusCode, error, message}`), never data.
   */
  private async call(
    current: () => Promise<Caller>,
    tool: ToolName,
    args: unknown,
    run: (caller: Caller, args: Record<string, unknown>) => Promise<CallToolResult>,
  ): Promise<CallToolResult> {
    let caller: Caller | undefined;
    let checked: Record<string, unknown> | undefined;
    try {
      caller = await current();
      checked = checkArguments(tool, args);
      const result = await run(caller, checked);
      const { item, selections } = callSubject(tool, checked);
      // Written after the answer, many rows an INSERT: what is guaranteed is said at recordAfter.
      await this.audit.recordAfter({
        action: 'mcp_tool_call',
        actor: auditActor(caller),
        target: item,
        details: { tool, selections },
      });
      this.calls.inc({ tool, outcome: 'success' });
      return result;
    } catch (error) {
      const reply = describeError(error, caller?.isAdmin ?? false);
      if (reply.unexpected) {
        this.logger.emit('error', 'mcp tool failed', {
          tool,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
      this.calls.inc({ tool, outcome: reply.code });
      // Arguments refused by their check are recorded by what was wrong with them, not copied whole.
      const subject = callSubject(tool, checked ?? objectOf(args));
      await this.audit.recordAfter({
        action: 'mcp_tool_call',
        actor: caller ? auditActor(caller) : null,
        target: subject.item,
        outcome: 'failure',
        details: checked
          ? { tool, selections: subject.selections, error: reply.code }
          : { tool, error: reply.code, refused: reply.message },
      });
      return {
        content: [{ type: 'text', text: JSON.stringify(renderCurrent(reply)) }],
        isError: true,
      };
    }
  }

  /**
   * A tools/call the SDK refused before any tool ran (ToolCallWatch): audited and counted as refused. A
   * tool this caller is not offered is `forbidden` (query_models for a non-administrator, as its HTTP
   * endpoint answers), a name of no tool `not_found` (counted as tool `unknown`: names are the caller's to
   * choose, the metric's labels are not), anything else `invalid_request`.
   */
  private async refused(
    current: () => Promise<Caller>,
    offered: ReadonlySet<ToolName>,
    refusal: SdkRefusal,
  ): Promise<void> {
    const params = objectOf(refusal.params);
    const name = typeof params.name === 'string' ? params.name : null;
    const tool = (TOOL_NAMES as readonly (string | null)[]).includes(name)
      ? (name as ToolName)
      : null;
    const code: ErrorCode =
      tool !== null && !offered.has(tool)
        ? 'forbidden'
        : tool === null && name !== null
          ? 'not_found'
          : 'invalid_request';
    this.calls.inc({ tool: tool ?? 'unknown', outcome: code });
    try {
      const caller = await current().catch(() => undefined);
      await this.audit.recordAfter({
        action: 'mcp_tool_call',
        actor: caller ? auditActor(caller) : null,
        // What it was about, as for a call that ran: the item its arguments name, else the tool it named.
        target: callSubject(name ?? '', objectOf(params.arguments)).item ?? name,
        outcome: 'failure',
        // A name is the caller's to choose, of any length: the row keeps a bounded part of it.
        details: {
          tool: name?.slice(0, 255) ?? null,
          error: code,
          refused: refusal.message.slice(0, 500),
        },
      });
    } catch (error) {
      this.logger.emit('error', 'mcp refusal not audited', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

/** `value` if it is an object (a tool call's arguments or params), else an empty one. */
function callerOfAuth(auth: AuthInfo | undefined): Caller {
  const caller = auth?.extra?.[CALLER_KEY] as Caller | undefined;
  return caller ?? ANONYMOUS;
}

function addressOfAuth(auth: AuthInfo | undefined): string | undefined {
  return auth?.extra?.[ADDRESS_KEY] as string | undefined;
}

function baseOfAuth(auth: AuthInfo | undefined): string | undefined {
  return auth?.extra?.[BASE_KEY] as string | undefined;
}
