import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a refused request's connection is kept, at most, to read and discard the rest of its body.
 * Clients that write their whole body before they read (Python's http.client and urllib, `requests`; Node's
 * fetch too, measured: its 413 arrives once its 32 MB are sent) see the answer only once their body is read;
 * one that keeps the connection open without sending is let go at this point. nginx waits 5 s for each read
 * (`lingering_timeout`) and 30 s in all (`lingering_time`); 5 s in all here holds a socket for less and still
 * lets a client on a 50 Mbit/s link send 30 MB.
 */
export const LINGER_MS = 5_000;

/**
 * How many bytes of a refused request are read and discarded, at most: 64 times the body limit, so that a
 * client that sends its whole body first (the 32 MB of issue 37 included) still reads the answer. Discarding
 * keeps nothing in memory (each chunk is dropped as it comes) and costs the server little CPU (see
 * docs/performance.md, "Figures behind the code", "Discarding a refused body"). A client that keeps
 * sending past it is cut, and may see a reset instead of the answer: it sent 64 times the limit unread.
 */
export const LINGER_BYTES = 64 * 1024 * 1024;

const LINGERING = new WeakSet<Socket>();

/**
 * Answers an error while the request's body is still unread, and closes the connection lingeringly, as
 * nginx and Apache do: the answer goes out with `Connection: close`, the server half-closes (FIN), and what
 * the client still sends is read and discarded until its request is complete or it closes, for at most
 * {@link LINGER_MS} and {@link LINGER_BYTES}; only then is the socket closed. Closing at once with bytes
 * unread makes the kernel send a reset, which can overtake the answer: with a 32 MB body sent by Node's
 * `fetch`, 13 requests of 20 got `write EPIPE` instead of their 413 (test/body-refusal.e2e-spec.ts).
 *
 * Call it as the refusal is decided, before the answer is written: discarding starts at once, so that Node
 * does not drop the body inside its parser (it does so for a request nobody reads), where no bound could
 * count it. Node's HTTP server ends a `Connection: close` exchange with `socket.destroySoon()` (FIN, then
 * destroy once it is flushed); on this socket it only sends the FIN, and the socket is destroyed here.
 */
export function closeLingering(
  request: IncomingMessage,
  response: { setHeader(name: string, value: string): unknown },
): void {
  response.setHeader('Connection', 'close');
  const socket = request.socket as Socket | null;
  if (!socket || LINGERING.has(socket)) return;
  LINGERING.add(socket);
  // An HTTP server's sockets allow half-open: after the FIN, reading goes on.
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
  };
  const cut = (): void => {
    socket.destroy();
  };
  // Nothing more to read (the request is complete, or the client closed its side): closed once the answer
  // and the FIN are flushed, with nothing unread, so the close is never a reset.
  const done = (): void => {
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', cut);
  };
  const deadline = setTimeout(cut, LINGER_MS);
  deadline.unref();
  // Bytes off the wire, framing included (tiny chunks do not stretch the bound).
  const start = socket.bytesRead;
  const discard = (): void => {
    if (socket.bytesRead - start > LINGER_BYTES) cut();
  };
  socket.once('close', () => {
    clearTimeout(deadline);
    request.off('data', discard);
  });
  socket.once('end', done);
  if (request.complete) {
    done();
  } else {
    request.once('end', done);
    request.on('data', discard);
  }
  // A parser that stopped at the limit paused the request.
  request.resume();
}
