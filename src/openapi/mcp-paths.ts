import type { OperationObject, PathItemObject, ResponseObject } from '@nestjs/swagger';
import { ref, Schemas } from '@/openapi/common-schemas';

/**
 * The MCP endpoint in the OpenAPI document (docs/mcp.md), written by hand: McpController is excluded from
 * the decorators' document because what it takes and answers is JSON-RPC, whose errors the protocol
 * shapes (`{"jsonrpc":"2.0","id":...,"error":{"code","message"}}`) where the SDK answers them; what the
 * application answers before the SDK (a token, the project, the Origin, the body's bounds) keeps the
 * layout's error body.
 */

export const MCP_SCHEMAS: Schemas = {
  McpMessage: {
    type: 'object',
    description:
      'A JSON-RPC 2.0 message of the Model Context Protocol: a request (with id) or a notification, of the 2026-07-28 revision (with its _meta envelope) or of 2025-11-25 (after initialize)',
    required: ['jsonrpc'],
    properties: {
      jsonrpc: { type: 'string', enum: ['2.0'] },
      id: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      method: { type: 'string', example: 'tools/list' },
      params: { type: 'object' },
    },
  },
  McpError: {
    type: 'object',
    description: 'A JSON-RPC error, as the protocol answers a message it refuses',
    required: ['jsonrpc', 'error'],
    properties: {
      jsonrpc: { type: 'string', enum: ['2.0'] },
      id: { oneOf: [{ type: 'string' }, { type: 'integer' }], nullable: true },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
      },
    },
  },
};

function either(description: string): ResponseObject {
  return {
    description,
    content: {
      'application/json': { schema: { oneOf: [ref('Error'), ref('McpError')] } },
    },
  };
}

function layoutError(description: string): ResponseObject {
  return { description, content: { 'application/json': { schema: ref('Error') } } };
}

const REFUSED = {
  '401': layoutError(
    'A token that is not valid; with OIDC configured, no token either (WWW-Authenticate names the Protected Resource Metadata)',
  ),
  '403': layoutError(
    "An Origin that is neither the service's own nor one of CORS_ORIGINS, or a Host that is not loopback on a loopback-bound service",
  ),
  '404': layoutError('Another project or version'),
  '500': layoutError('An unexpected failure'),
  '503': layoutError('A service Drey depends on is unavailable'),
};

/** A bearer token, the same Drey token as `x-api-key` (this endpoint's alone), or nobody. */
const SECURITY: Record<string, string[]>[] = [{ bearer: [] }, { apiKey: [] }, {}];

function post(summary: string): OperationObject {
  return {
    tags: ['mcp'],
    summary,
    description:
      'Streamable HTTP, stateless. Send `Accept: application/json, text/event-stream`. A request is answered with its JSON-RPC response, as JSON or as a server-sent event; a notification with 202. docs/mcp.md lists the tools.',
    security: SECURITY,
    requestBody: {
      required: true,
      content: { 'application/json': { schema: ref('McpMessage') } },
    },
    responses: {
      '200': {
        description: 'The JSON-RPC response (a tool refusal is a result with isError: true)',
        content: {
          'application/json': { schema: { type: 'object' } },
          'text/event-stream': { schema: { type: 'string' } },
        },
      },
      '202': { description: 'A notification, accepted' },
      '400': either(
        'A body that is not JSON, not a JSON-RPC message, or a message the protocol refuses',
      ),
      ...REFUSED,
      '406': either('An Accept header without application/json and text/event-stream'),
      '413': either('A body over the bound of every route'),
      '415': either('A body that is not JSON'),
    },
  };
}

function other(method: string): OperationObject {
  return {
    tags: ['mcp'],
    summary: `${method}: not served (the server keeps no session)`,
    security: SECURITY,
    responses: {
      '405': {
        description: 'The stateless server has no stream or session to open or end',
        content: { 'application/json': { schema: ref('McpError') } },
      },
      '400': either('A request the protocol refuses'),
      ...REFUSED,
      '406': either('An Accept header the protocol refuses'),
      // A body that is sent is bounded and typed as on every route, whatever the method.
      '413': layoutError('A body over the bound of every route'),
      '415': layoutError('A body that is not JSON'),
    },
  };
}

/** The endpoint at `P/mcp` and `/mcp`. */
export function mcpPaths(prefix: string): Record<string, PathItemObject> {
  const item = (name: string): PathItemObject => ({
    post: { ...post(`The MCP server (${name})`), operationId: `mcp_post_${name}` },
    get: { ...other('GET'), operationId: `mcp_get_${name}` },
    delete: { ...other('DELETE'), operationId: `mcp_delete_${name}` },
  });
  return { [`/${prefix}/mcp`]: item('project'), '/mcp': item('root') };
}
