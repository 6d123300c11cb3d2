import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { HttpReply, sendReply } from '@/http/reply/http-reply';

/** What Nest's router calls to write what a handler returned: the HTTP adapter's `reply`. */
interface Replying {
  reply(response: ServerResponse, body: unknown, statusCode?: number): unknown;
}

const TAUGHT = Symbol('drey:http-reply');

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
    const adapter = this.host.httpAdapter as unknown as Replying & { [TAUGHT]?: true };
    if (adapter[TAUGHT]) return;
    const reply = adapter.reply.bind(adapter);
    adapter.reply = (response, body, statusCode) =>
      body instanceof HttpReply ? sendReply(body, response) : reply(response, body, statusCode);
    adapter[TAUGHT] = true;
  }
}
