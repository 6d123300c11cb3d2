import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { APP_CONFIG, AppConfig } from '@/config/config';
import type { Caller } from '@/core/caller';
import { AuthenticationRequiredError, ForbiddenError } from '@/core/errors';
import { McpService } from '@/mcp/mcp.service';
import { clientAddress } from '@/http/request/client-address';
import { refusedCaller } from '@/mcp/mcp-origin';
import { McpProtectedResource } from '@/mcp/mcp-protected-resource';

/**
 * The MCP server's Streamable HTTP face, behind McpController: the request has been through the
 * application's middleware (request id, log line, metrics, body limits, JSON depth) and its guards (the
 * caller: a Drey token, an OIDC token, trusted headers or nobody) and the `Host` rule of every route
 * (http/request/host-rule.ts); here its `Origin` is checked (mcp-origin.ts) and it is handed to the SDK's
 * handler with its parsed body and the caller.
 */
@Injectable()
export class McpHttp {
  private readonly node: ReturnType<typeof toNodeHandler>;

  constructor(
    mcp: McpService,
    private readonly resource: McpProtectedResource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.node = toNodeHandler(mcp.handler);
  }

  async serve(caller: Caller, request: Request, response: Response): Promise<void> {
    const refused = refusedCaller(
      { host: request.headers.host, origin: request.headers.origin },
      { corsOrigins: this.config.corsOrigins },
    );
    if (refused !== undefined) throw new ForbiddenError(refused);
    // With an identity provider, an assistant is asked to sign a person in (the 401 names the Protected
    // Resource Metadata, McpProtectedResource) rather than served the public items anonymously.
    if (this.resource.enabled && caller.username === null) {
      throw new AuthenticationRequiredError(
        'Sign in through the identity provider that resource_metadata (WWW-Authenticate) names, then send Authorization: Bearer <token>',
      );
    }
    const node = request as Request & { auth?: AuthInfo };
    node.auth = McpService.authInfo(caller, clientAddress(request));
    // Express' JSON parser has read the body (within BODY_LIMIT_BYTES and the JSON depth bound).
    await this.node(node, response, request.body as unknown);
  }
}
