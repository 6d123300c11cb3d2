import Negotiator from 'negotiator';
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import {
  type BrotliOptions,
  type ZlibOptions,
  brotliCompress,
  constants,
  createBrotliCompress,
  createGzip,
  gzip,
} from 'node:zlib';
import { countCompression } from '@/metrics/compressions';

/** The content codings Drey sends, preferred in this order when `Accept-Encoding` gives them equal quality. */
export type Coding = 'br' | 'gzip';

/**
 * Brotli first on a tie: at the levels used here it makes smaller bodies than gzip for less CPU, on JSON
 * pages and CSV streams alike (see docs/performance.md, "Figures behind the code", "Content codings").
 */
const PREFERRED: Coding[] = ['br', 'gzip'];
const AVAILABLE = ['br', 'gzip', 'identity'];

/**
 * Bodies smaller are sent plain. Compressing one costs a sizeable part of a whole cached read (see
 * docs/performance.md, "Figures behind the code", "Content codings") and saves under 1 KB: the response fits
 * the same one or two TCP segments (1,460 B each) either way. It is also the `compression` middleware's
 * default.
 */
export const COMPRESS_MIN_BYTES = 1024;

/**
 * Types worth compressing: text, JSON (NDJSON, +json), JavaScript, XML and SVG. Our own list, not the
 * `compressible` package's table of every MIME type: Drey writes a closed, small set of types, and what is
 * already compressed (PNG, Parquet, Arrow, xlsx, octet-stream) is simply not on it.
 */
const COMPRESSIBLE =
  /^(?:text\/|image\/svg\+xml|application\/(?:json|javascript|x-ndjson|xml|[\w.-]+\+(?:json|xml))\b)/i;

export function compressible(contentType: OutgoingHttpHeader | undefined): boolean {
  return typeof contentType === 'string' && COMPRESSIBLE.test(contentType);
}

/** Codings chosen per distinct `Accept-Encoding` value: clients send few, and the cached read is hot. */
export const CHOSEN_MAX = 100;
const chosen = new Map<string, Coding | undefined>();

/** How many `Accept-Encoding` values are remembered now (at most {@link CHOSEN_MAX}). */
export function remembered(): number {
  return chosen.size;
}

/**
 * The coding `Accept-Encoding` (RFC 9110 §12.5.3) asks for, as the `negotiator` package (Express' own) reads
 * it: the highest quality among br, gzip and identity, q=0 refusing one, `*` standing for those not named,
 * identity acceptable unless named or `*` with q=0; brotli, then gzip, on a tie. Undefined: the body goes
 * plain, which is also the answer when the header is absent (RFC: any coding would do, but a client that
 * sends none rarely decodes one) and when it refuses everything, identity included: the RFC lets a server
 * send identity anyway, and a 406 for a body any client can read helps nobody.
 */
export function codingOf(acceptEncoding: string | string[] | undefined): Coding | undefined {
  if (acceptEncoding === undefined) return undefined;
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding;
  if (chosen.has(header)) return chosen.get(header);
  const negotiator = new Negotiator({ headers: { 'accept-encoding': header } });
  // negotiator 1.x takes the server's preference on a tie; its types (0.6) do not know the option yet.
  const encodings = negotiator.encodings.bind(negotiator) as (
    available: string[],
    options: { preferred: string[] },
  ) => string[];
  const first = encodings(AVAILABLE, { preferred: PREFERRED })[0];
  const coding = first === 'br' || first === 'gzip' ? first : undefined;
  // A full table starts again: a client inventing headers costs a negotiation, not memory.
  if (chosen.size >= CHOSEN_MAX) chosen.clear();
  chosen.set(header, coding);
  return coding;
}

/** The request a response answers (Node sets it on every server response). */
function requestOf(response: ServerResponse): IncomingMessage | undefined {
  return (response as ServerResponse & { req?: IncomingMessage }).req;
}

/**
 * The coding a response of `length` bytes (undefined: a stream, length unknown) is sent in, given its headers
 * as set so far: undefined when it goes plain. A compressible type gets `Vary: Accept-Encoding` whatever its
 * size, as the `compression` middleware does: the choice depends on the header, even when it is plain.
 */
export function responseCoding(response: ServerResponse, length?: number): Coding | undefined {
  if (response.getHeader('Content-Encoding') !== undefined) return undefined;
  if (!compressible(response.getHeader('Content-Type'))) return undefined;
  varyOnEncoding(response);
  if (length !== undefined && length < COMPRESS_MIN_BYTES) return undefined;
  const coding = codingOf(requestOf(response)?.headers['accept-encoding']);
  if (coding === undefined) return undefined;
  response.setHeader('Content-Encoding', coding);
  const etag = response.getHeader('ETag');
  if (typeof etag === 'string') response.setHeader('ETag', codedEtag(etag, coding));
  return coding;
}

/** Adds `Accept-Encoding` to the response's `Vary`, keeping what is there (CORS' `Origin`, say). */
export function varyOnEncoding(response: ServerResponse): void {
  const vary = response.getHeader('Vary');
  if (vary === undefined) {
    response.setHeader('Vary', 'Accept-Encoding');
    return;
  }
  const text = Array.isArray(vary) ? vary.join(', ') : String(vary);
  if (text.trim() === '*' || /(?:^|,)\s*accept-encoding\s*(?:,|$)/i.test(text)) return;
  response.setHeader('Vary', `${text}, Accept-Encoding`);
}

/**
 * The ETag of a compressed variant: the plain one with the coding inside its quotes (`"abc"` → `"abc-br"`). A
 * compressed body is another representation with other bytes, so it gets another strong tag (RFC 9110
 * §8.8.3) rather than a weak one shared with the plain body, and caches and Range never mix them; `baseEtag`
 * takes the suffix off again, so that `If-None-Match` holding any variant's tag matches the resource.
 */
export function codedEtag(etag: string, coding: Coding): string {
  return etag.endsWith('"') ? `${etag.slice(0, -1)}-${coding}"` : etag;
}

/** An ETag as `If-None-Match` holds it, without its weak mark and the coding `codedEtag` added. */
export function baseEtag(candidate: string): string {
  return candidate
    .trim()
    .replace(/^W\//, '')
    .replace(/-(?:br|gzip)"$/, '"');
}

/**
 * Whether an `If-None-Match` header names this ETag (a list, weak forms, or `*`), or the tag of one of its
 * compressed variants: the client holds a copy of the same resource either way.
 */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => baseEtag(candidate) === etag);
}

/**
 * The tag a 304 confirms: the one of `If-None-Match` that names `etag` (any variant of it), so that the client
 * keeps the variant it holds; `etag` when none does (an `*`).
 */
export function heldEtag(response: ServerResponse, etag: string): string {
  const header = requestOf(response)?.headers['if-none-match'];
  if (!header) return etag;
  const held = header.split(',').find((candidate) => baseEtag(candidate) === etag);
  return held?.trim() ?? etag;
}

/**
 * How hard to compress. `body`: a body in hand, compressed once and often kept (brotli 4, gzip 6).
 * `stream`: as fast as it is produced (brotli 1, gzip 1): a 1M-row CSV export must not wait on it, and the
 * higher levels fall behind DuckDB's writer. `asset`: a documentation file compressed once per process
 * (brotli 9, gzip 9; brotli 11 takes seconds for little more). See docs/performance.md, "Figures behind the
 * code", "Content codings".
 */
export type Effort = 'body' | 'stream' | 'asset';

const BROTLI_QUALITY: Record<Effort, number> = { body: 4, stream: 1, asset: 9 };
const GZIP_LEVEL: Record<Effort, number> = { body: 6, stream: 1, asset: 9 };

function brotliOptions(effort: Effort, size?: number): BrotliOptions {
  const params: Record<number, number> = {
    [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY[effort],
  };
  if (size !== undefined) params[constants.BROTLI_PARAM_SIZE_HINT] = size;
  return { params };
}

function gzipOptions(effort: Effort): ZlibOptions {
  return { level: GZIP_LEVEL[effort] };
}

/** Compresses a body in hand on libuv's thread pool, off the event loop. */
export function compress(body: string | Buffer, coding: Coding, effort: Effort): Promise<Buffer> {
  countCompression(coding, effort);
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: Buffer) => (error ? reject(error) : resolve(result));
    if (coding === 'br') brotliCompress(body, brotliOptions(effort, Buffer.byteLength(body)), done);
    else gzip(body, gzipOptions(effort), done);
  });
}

/** A compressing stream for a body written as it is produced. */
export function compressor(coding: Coding) {
  countCompression(coding, 'stream');
  return coding === 'br'
    ? createBrotliCompress(brotliOptions('stream'))
    : createGzip(gzipOptions('stream'));
}
