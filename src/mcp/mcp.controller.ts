import { Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentCaller, NoAuth, OptionalAuth } from '@/http/access/access.decorators';
import type { Caller } from '@/core/caller';
import { CURRENT } from '@/http/routes';
import { McpHttp } from '@/mcp/mcp-http';
import { McpProtectedResource, WELL_KNOWN } from '@/mcp/mcp-protected-resource';

/** `P/mcp`, and `/mcp` for the served project (decisions.md). */
export const MCP_PATHS = [`${CURRENT}/mcp`, 'mcp'];
const PATHS = MCP_PATHS;

/**
 * The Model Context Protocol endpoint (Streamable HTTP). Open to anonymous callers, whose tools offer
 * the public items only; a token that is present is checked as on every route. `@Res()`: the SDK writes
 * the answer, a JSON body or an SSE stream. Documented by hand in the OpenAPI document (openapi/mcp-paths.ts).
 */
@ApiExcludeController()
@OptionalAuth()
@Controller()
export class McpController {
  constructor(
    private readonly mcp: McpHttp,
    private readonly resource: McpProtectedResource,
  ) {}

  /** RFC 9728 Protected Resource Metadata of each path of the endpoint, when OIDC is configured. */
  @Get(PATHS.map((path) => `${WELL_KNOWN}/${path}`))
  @NoAuth()
  metadata(@Req() request: Request) {
    return this.resource.metadata(request, request.path.slice(WELL_KNOWN.length + 1));
  }

  @Post(PATHS)
  post(@CurrentCaller() caller: Caller, @Req() request: Request, @Res() response: Response) {
    return this.mcp.serve(caller, request, response);
  }

  /** A 2025-era client's stream or session end: the stateless server answers 405. */
  @Get(PATHS)
  get(@CurrentCaller() caller: Caller, @Req() request: Request, @Res() response: Response) {
    return this.mcp.serve(caller, request, response);
  }

  @Delete(PATHS)
  delete(@CurrentCaller() caller: Caller, @Req() request: Request, @Res() response: Response) {
    return this.mcp.serve(caller, request, response);
  }
}
