import { Injectable, OnModuleInit, StreamableFile } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { HttpReply, sendReply } from '@/http/reply/http-reply';

/** What Nest's router calls to write what a handler returned: the HTTP adapter's `reply`. */
interface Replying {
  reply(response: ServerResponse, body: unknown, statusCode?: number): unknown;
}

const TAUGHT = Symbol('drey:http-reply');

/**
 * A handler's plain object or array as Express' `res.json` sends it (`JSON.stringify`, as the app sets no
 * replacer or spacing; `application/json; charset=utf-8`; no ETag, which the app turns off), so that it goes
 * through the one writer and is compressed like every other reply: the catalogs, parameters, users. Undefined
 * for the rest, which Nest's Express adapter sends as before: a type set by the handler (`@Header`), an
 * error body (the adapter rewrites it), a stream, bytes, text, a status without a body.
 */
function jsonReply(
  response: ServerResponse,
  body: unknown,
  statusCode?: number,
): HttpReply | undefined {
  const status = statusCode ?? response.statusCode;
  if (typeof body !== 'object' || body === null || status === 204 || status === 304)
    return undefined;
  if (body instanceof Error || Buffer.isBuffer(body) || body instanceof StreamableFile)
    return undefined;
  if (response.getHeader('Content-Type') !== undefined) return undefined;
  return new HttpReply(
    status,
    { 'Content-Type': 'application/json; charset=utf-8' },
    JSON.stringify(body),
  );
}

/**
 * Teaches Nest's Express path to send an {@link HttpReply} with {@link sendReply}, the writer the fast route
 * uses. Nest hands every handler's result to its HTTP adapter's `reply` (after the interceptors, once); that
 * is the one place a result is written, so the reply is recognised there and every other result goes on to
 * Express' `res.send` as before. An interceptor could not do it: Nest writes whatever the interceptor hands
 * back after it, a second time. The promise of a stream is Nest's to await, so an error before its first
 * chunk reaches the exception filters as any handler's error does.
 */
@Injectable()
export class NestReplies implements OnModuleInit {
  constructor(private readonly host: HttpAdapterHost) {}

  onModuleInit(): void {
    const adapter = this.host.httpAdapter as unknown as
      (Replying & { [TAUGHT]?: true }) | null | undefined;
    // An application without HTTP (`drey mcp`'s application context) has no adapter to teach.
    if (!adapter || adapter[TAUGHT]) return;
    const reply = adapter.reply.bind(adapter);
    adapter.reply = (response, body, statusCode) => {
      if (body instanceof HttpReply) return sendReply(body, response);
      const json = jsonReply(response, body, statusCode);
      return json ? sendReply(json, response) : reply(response, body, statusCode);
    };
    adapter[TAUGHT] = true;
  }
}
