import type { AuthInfo, JSONRPCMessage, Transport } from '@modelcontextprotocol/server';

type RequestId = string | number;

/** What the SDK answered a tools/call it refused itself: a JSON-RPC error, or a tool error. */
export interface SdkRefusal {
  /** The request's `params` as sent (not checked: the SDK refused them, perhaps for their shape). */
  params: unknown;
  /** The SDK's message: `Tool foo not found`, `Invalid tools/call request: ...`. */
  message: string;
  /** What the request came with: over HTTP, its caller (McpService.authInfo). */
  authInfo?: AuthInfo;
}

function isToolCall(
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id: RequestId; params?: unknown } {
  return 'method' in message && message.method === 'tools/call' && 'id' in message;
}

function answerOf(message: JSONRPCMessage): { id: RequestId; message: string } | null {
  if (!('id' in message) || 'method' in message) return null;
  if ('error' in message) return { id: message.id as RequestId, message: message.error.message };
  const result = (message as { result?: { content?: { text?: unknown }[] } }).result;
  const text = result?.content?.[0]?.text;
  return { id: message.id, message: typeof text === 'string' ? text : '' };
}

/**
 * The tools/call requests of one server's connection, watched on its transport, so that a call the SDK
 * refuses before any tool handler runs (an unknown tool, one this caller is not offered, a request whose
 * envelope fails the SDK's own check) is audited and counted like any other refusal. Every door (HTTP of
 * both revisions, stdio) connects the server it builds to a transport, which is where all of them pass.
 *
 * A handler that runs {@link claim}s its request; a request answered unclaimed was refused by the SDK, and
 * its answer is handed to `onRefused` before it is sent.
 */
export class ToolCallWatch {
  private readonly unclaimed = new Map<RequestId, { params: unknown; authInfo?: AuthInfo }>();

  constructor(private readonly onRefused: (refusal: SdkRefusal) => Promise<void>) {}

  /** Called by a tool's handler: this request reached the tool, whose own path audits it. */
  claim(id: RequestId | undefined): void {
    if (id !== undefined) this.unclaimed.delete(id);
  }

  /** Watches a transport the server has just connected to (its `onmessage` set). */
  watch(transport: Transport): void {
    const receive = transport.onmessage;
    const send = transport.send.bind(transport);
    transport.onmessage = (message, extra) => {
      if (isToolCall(message)) {
        this.unclaimed.set(message.id, { params: message.params, authInfo: extra?.authInfo });
      }
      receive?.(message, extra);
    };
    transport.send = async (message, options) => {
      const answer = answerOf(message);
      if (answer !== null && this.unclaimed.has(answer.id)) {
        const { params, authInfo } = this.unclaimed.get(answer.id)!;
        this.unclaimed.delete(answer.id);
        // Recorded before the answer leaves, as a handled call's row is (recordAfter queues it).
        await this.onRefused({ params, message: answer.message, authInfo });
      }
      return send(message, options);
    };
  }
}
