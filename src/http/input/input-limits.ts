import busboy from 'busboy';
import type { NextFunction, Request, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { parse as parseQueryString, ParsedUrlQuery } from 'node:querystring';
import { DomainError, InvalidRequestError, UnsupportedMediaTypeError } from '@/core/errors';
import { mediaType } from '@/http/input/media-type';
import { closeLingering } from '@/http/input/lingering-close';
import { inputFault, isStorableText, STORABLE_ONLY, storableCopy } from '@/core/input-rules';

/**
 * Every bound on what a request may carry, in one place (docs/security.md lists them). Each is enforced
 * before the part it bounds is buffered, and a test tries to get past each (test/input-limits.e2e-spec.ts).
 */

/** The largest body of any content type: every body of the interface is a few KB at most. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Query parameters (repeated names counted each time) one URL may carry. Node's parser stops at 1,000 by
 * default and drops the rest silently, which let a caller hide `group_by` past the 1,000th key.
 */
export const MAX_QUERY_PARAMS = 1000;

/**
 * The login form (both layouts) has six fields; multipart adds framing per field. busboy's defaults
 * (Infinity fields of 1 MB, Infinity parts) let one anonymous request buffer a gigabyte.
 */
export const FORM_LIMITS = {
  fields: 16,
  fieldSize: 4096,
  fieldNameSize: 64,
} as const;

// The rules themselves are the core's, for every door; the HTTP door applies them here, before a route.
export { isStorableText, storableCopy };

/**
 * Refuses a value (a parsed body, a query) that holds a string, or an object key, that storage cannot hold.
 * Bodies are at most {@link MAX_JSON_DEPTH} deep (json-depth.ts) when they get here.
 */
export function assertStorable(value: unknown, where: string): void {
  if (inputFault(value, where, STORABLE_ONLY) !== null) throw unstorable(where);
}

function unstorable(where: string): InvalidRequestError {
  return new InvalidRequestError(
    `The ${where} holds a NUL character or an unpaired UTF-16 surrogate, which no field may contain`,
  );
}

/**
 * The query string as Express' "simple" parser reads it (repeated names become arrays, no nesting), with
 * the number of parameters bounded instead of silently cut, and no NUL in any name or value.
 */
export function parseQuery(search: string | null | undefined): ParsedUrlQuery {
  // Express passes null for a URL without `?`.
  if (!search) return {};
  let params = 1;
  for (let at = search.indexOf('&'); at >= 0; at = search.indexOf('&', at + 1)) {
    if (++params > MAX_QUERY_PARAMS) {
      throw new InvalidRequestError(
        `The query string has more than ${MAX_QUERY_PARAMS} parameters`,
      );
    }
  }
  // maxKeys 0: no cut (the count is bounded above).
  const query = parseQueryString(search, '&', '=', { maxKeys: 0 });
  assertStorable(query, 'query string');
  return query;
}

/**
 * The query of a URL, read by {@link parseQuery}; refuses what the path may not hold: `%00` (Express
 * decodes route parameters with decodeURIComponent, which keeps it).
 */
export function checkUrl(url: string): ParsedUrlQuery {
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  if (/%00/i.test(path)) throw unstorable('path');
  return mark < 0 ? {} : parseQuery(url.slice(mark + 1));
}

/**
 * A JSON body's charset (RFC 8259 §8.1: UTF-8 only). body-parser would decode UTF-16 and UTF-32 too, after
 * the depth guard has looked at the raw bytes, where `00 22` looks like a quote; so only UTF-8 is read.
 */
function checkJsonCharset(contentType: string | undefined): void {
  if (mediaType(contentType) !== 'application/json') return;
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new UnsupportedMediaTypeError(
      `A JSON body must be UTF-8 (RFC 8259), not ${charset || 'an empty charset'}`,
    );
  }
}

/** A body over {@link BODY_LIMIT_BYTES}, answered before it is read; the connection then closes lingeringly. */
export class PayloadTooLargeError extends DomainError {
  constructor() {
    super('payload_too_large', `The request body is larger than ${BODY_LIMIT_BYTES} bytes`);
  }
}

/**
 * The bounds that do not depend on the route, checked before any body parser reads a byte: the URL, a
 * declared length over the limit (whatever the content type), a JSON body's charset. `fail` answers in the
 * layout's shape (app.ts passes `sendError`).
 */
export function requestLimits(
  fail: (error: unknown, request: Request, response: Response) => void,
) {
  return (request: Request, response: Response, next: NextFunction): void => {
    try {
      checkUrl(request.url);
      const length = request.headers['content-length'];
      if (length !== undefined && Number(length) > BODY_LIMIT_BYTES)
        throw new PayloadTooLargeError();
      checkJsonCharset(request.headers['content-type']);
    } catch (error) {
      closeLingering(request, response);
      fail(error, request, response);
      return;
    }
    next();
  };
}

/**
 * After parsing: no string of a JSON or form body may hold what storage cannot. A middleware after the
 * body parsers, so every route's body is checked once, whichever parser read it; `checksItsOwn` names the
 * paths whose handler applies the same rules where it audits the refusal (MCP).
 */
export function storableBodies(
  fail: (error: unknown, request: Request, response: Response) => void,
  checksItsOwn: (path: string) => boolean = () => false,
) {
  return (request: Request, response: Response, next: NextFunction): void => {
    if (checksItsOwn(request.path)) {
      next();
      return;
    }
    try {
      assertStorable(request.body, 'request body');
    } catch (error) {
      fail(error, request, response);
      return;
    }
    next();
  };
}

/**
 * Reads a `multipart/form-data` body of text fields (the login form), bounded as {@link FORM_LIMITS} and
 * {@link BODY_LIMIT_BYTES} say, into `request.body`. busboy (the parser multer wraps) does the parsing; multer
 * itself cannot stop reading at a total size: on an error it drains the whole body before answering.
 * A file part, too many fields, a field too long, a body too long or malformed framing is refused as soon
 * as it is seen; the rest of the body is only discarded, within the bounds of lingering-close.ts.
 */
export function readMultipartForm(
  request: IncomingMessage & { body?: unknown },
  response: { setHeader(name: string, value: string): unknown },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        defParamCharset: 'utf8',
        // One more than allowed, so that busboy's event says "over", not "at", the limit.
        limits: {
          fields: FORM_LIMITS.fields,
          fieldSize: FORM_LIMITS.fieldSize + 1,
          fieldNameSize: FORM_LIMITS.fieldNameSize,
          files: 0,
          parts: FORM_LIMITS.fields,
        },
      });
    } catch {
      reject(new InvalidRequestError('The multipart body has no boundary'));
      return;
    }
    let received = 0;
    let settled = false;
    const stop = (error?: Error): void => {
      if (settled) return;
      settled = true;
      request.off('data', count);
      request.unpipe(parser);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      if (error) {
        closeLingering(request, response);
        reject(error);
      } else {
        request.body = fields;
        resolve();
      }
    };
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > BODY_LIMIT_BYTES) stop(new PayloadTooLargeError());
    };
    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) {
        stop(
          new DomainError(
            'payload_too_large',
            `A form field is longer than ${FORM_LIMITS.fieldSize} bytes (or its name than ${FORM_LIMITS.fieldNameSize})`,
          ),
        );
        return;
      }
      fields[name] = value;
    });
    parser.on('file', () => stop(new InvalidRequestError('The form takes no files')));
    const tooMany = () =>
      stop(new InvalidRequestError(`The form has more than ${FORM_LIMITS.fields} fields`));
    parser.on('fieldsLimit', tooMany);
    parser.on('partsLimit', tooMany);
    parser.on('filesLimit', () => stop(new InvalidRequestError('The form takes no files')));
    parser.on('error', (error: Error) =>
      stop(new InvalidRequestError(`The multipart body could not be read: ${error.message}`)),
    );
    parser.on('close', () => stop());
    request.on('error', (error) => stop(error));
    // Counted beside the pipe: both see every chunk, and the count can stop the pipe.
    request.on('data', count);
    request.pipe(parser);
  });
}

/**
 * Postgres' class 22 (data exception: 22021 a NUL, 22P05 a character its encoding lacks, 22001 a value too
 * long, 22P02 a malformed value) is raised by a value the request carried. Inputs are checked at the door;
 * one that still gets through is the client's error (400), not the server's. `severity` or `driverError`
 * (TypeORM's wrapper) tells a database error from any other error with a `code`.
 */
export function isPostgresDataException(error: unknown): boolean {
  const fields = (error ?? {}) as { code?: unknown; severity?: unknown; driverError?: unknown };
  return (
    typeof fields.code === 'string' &&
    /^22[0-9A-Z]{3}$/.test(fields.code) &&
    (fields.severity !== undefined || fields.driverError !== undefined)
  );
}
