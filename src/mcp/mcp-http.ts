import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import {
  SUPPORTED_PROTOCOL_VERSIONS,
  classifyInboundRequest,
  isJsonContentType,
  parseJSONRPCMessage,
} from '@modelcontextprotocol/server';
import type { AuthInfo, JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/server';
import { APP_CONFIG, AppConfig } from '@/config/config';
import type { Caller } from '@/core/caller';
import { AuthenticationRequiredError, ForbiddenError } from '@/core/errors';
import { objectOf } from '@/mcp/mcp-arguments';
import { McpService } from '@/mcp/mcp.service';
import { clientAddress } from '@/http/request/client-address';
import { HttpReply, sendReply } from '@/http/reply/http-reply';
import { refusedCaller } from '@/mcp/mcp-origin';
import { McpProtectedResource } from '@/mcp/mcp-protected-resource';

/**
 * The MCP server's Streamable HTTP face, behind McpController: the request has been through the
 * application's middleware (request id, log line, metrics, body limits, JSON depth) and its guards (the
 * caller: a Drey token, an OIDC token, trusted headers or nobody) and the `Host` rule of every route
 * (http/request/host-rule.ts); here its `Origin` is checked (mcp-origin.ts) and it is handed to the SDK
 * with its parsed body and the caller: a plain 2025-era call to a server kept for the caller's view
 * ({@link plainCall}, McpService.answer), another 2025-era POST to the SDK's Streamable HTTP transport
 * answering in JSON ({@link answerInJson}), anything else to the SDK's handler.
 */
@Injectable()
export class McpHttp {
  private readonly node: ReturnType<typeof toNodeHandler>;

  constructor(
    private readonly mcp: McpService,
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
    // With an authorization server, an assistant is asked to sign a person in (the 401 names the Protected
    // Resource Metadata, McpProtectedResource) rather than served the public items anonymously, unless
    // the operator chose to serve them (MCP_ANONYMOUS).
    if (this.resource.asksToSignIn && caller.username === null) {
      throw new AuthenticationRequiredError(
        'Sign in through the authorization server that resource_metadata (WWW-Authenticate) names, then send Authorization: Bearer <token>',
      );
    }
    const address = clientAddress(request);
    const base = this.resource.originOf(request);
    const node = request as Request & { auth?: AuthInfo };
    node.auth = McpService.authInfo(caller, address, base);
    // Express' JSON parser has read the body (within BODY_LIMIT_BYTES and the JSON depth bound).
    const body = request.body as unknown;
    if (answersInJson(request, body)) {
      const plain = plainCall(request, body);
      if (plain !== undefined) {
        const answer = JSON.stringify(await this.mcp.answer(caller, address, plain, base));
        // As the SDK's transport answers in JSON (`Response.json`): 200, application/json; written by the
        // one writer of replies (its length, and compression as the client accepts it).
        await sendReply(
          new HttpReply(200, { 'Content-Type': 'application/json' }, answer),
          response,
        );
        return;
      }
      await this.answerInJson(caller, address, node, response, body);
      return;
    }
    await this.node(node, response, body);
  }

  /**
   * A 2025-era POST, served as the SDK's stateless fallback serves it (a server of its own on a Streamable
   * HTTP transport without sessions) but on the SDK's Node transport, which takes the parsed body, and with
   * `enableJsonResponse`: the answer is one `application/json` body, as the transport allows, rather than an
   * SSE stream of one event. The stream, its web conversions and the request rebuilt for the SDK's handler
   * were most of what a call cost beyond the read (docs/performance.md). No tool sends anything before its
   * result (progress, logging, a request to the client), so nothing is dropped; a request that asks for
   * progress goes to the SDK's handler anyway (answersInJson).
   */
  private async answerInJson(
    caller: Caller,
    address: string,
    request: Request & { auth?: AuthInfo },
    response: Response,
    body: unknown,
  ): Promise<void> {
    const server = await this.mcp.serverFor(caller, undefined, address);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      await transport.handleRequest(request, response, body);
    } finally {
      // Closing the server closes its transport; the answer has been written.
      server.close().catch(() => undefined);
    }
  }
}

/**
 * Whether a POST is 2025-era traffic, by the SDK's own classification (`classifyInboundRequest`, the step
 * its handler routes by), whose messages ask for no progress (`_meta.progressToken`), which one JSON
 * answer could not carry. Its Content-Type and Accept are the transport's to check.
 */
function answersInJson(request: Request, body: unknown): boolean {
  if (request.method !== 'POST' || body === undefined) return false;
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  if (messages.some(asksForProgress)) return false;
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: request.get('mcp-protocol-version'),
    mcpMethodHeader: request.get('mcp-method'),
    mcpNameHeader: request.get('mcp-name'),
    body,
  });
  return outcome.kind === 'legacy';
}

/**
 * A 2025-era POST (answersInJson) that the SDK's Streamable HTTP transport would deliver as it is, with
 * no answer of its own, by the transport's own tests in its own order (`handlePostRequest`): both media
 * types accepted, a JSON body, one JSON-RPC message (its schema, `parseJSONRPCMessage`), a request (an id
 * and a method: the message schema's only such member) that is not `initialize` (a server kept for others
 * must not keep a client's capabilities), of a protocol version the server supports when the header
 * names one. Its parsed message, or undefined: anything else (a batch, a notification, `initialize`, a
 * header the transport refuses) is the transport's to answer.
 */
function plainCall(request: Request, body: unknown): JSONRPCRequest | undefined {
  if (Array.isArray(body)) return undefined;
  const accept = request.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) {
    return undefined;
  }
  if (!isJsonContentType(request.get('content-type') ?? null)) return undefined;
  let message: JSONRPCMessage;
  try {
    message = parseJSONRPCMessage(body);
  } catch {
    return undefined;
  }
  if (!('method' in message) || !('id' in message) || message.method === 'initialize') {
    return undefined;
  }
  const version = request.get('mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  return message;
}

function asksForProgress(message: unknown): boolean {
  const params = objectOf(objectOf(message).params);
  return objectOf(params._meta).progressToken !== undefined;
}
