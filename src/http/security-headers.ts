import type { NextFunction, Request, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A Content-Security-Policy's directives, as helmet takes them: `{ defaultSrc: ["'none'"] }`. */
export type PolicyDirectives = Record<string, readonly string[]>;

/** Response headers computed once: each name with its value, in the order helmet sets them. */
export type HeaderList = readonly (readonly [name: string, value: string])[];

/** No site may frame a response of Drey's: no page of it needs to be, and clickjacking needs a frame. */
const NOT_FRAMED: PolicyDirectives = { frameAncestors: ["'none'"] };

/**
 * The policy of every response but the documentation pages and the HTML dashboards, which set their own:
 * nothing may load, run or submit, so a JSON body (or an error) opened as a document stays inert.
 */
const API_POLICY: PolicyDirectives = {
  defaultSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  ...NOT_FRAMED,
};

/**
 * helmet's defaults, but for the policy above and frames refused outright (`DENY`, as `frame-ancestors
 * 'none'` says to browsers that read only X-Frame-Options). HSTS stays helmet's (a year, subdomains):
 * browsers ignore it over plain HTTP, and behind TLS it is what a deployment wants.
 */
const HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: API_POLICY },
  xFrameOptions: { action: 'deny' },
};

type Middleware = (
  request: IncomingMessage,
  response: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/**
 * The headers a helmet middleware sets, run once on a stand-in response: helmet decides the headers from
 * its options only (never from the request) when no directive is a function, so once is every time.
 */
function headersOf(middleware: Middleware): [string, string][] {
  const headers: [string, string][] = [];
  let failure: Error | undefined;
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name, String(value)]);
      return recorder;
    },
    // X-Powered-By, which Express no longer sends (app.ts disables it) and the fast routes never do.
    removeHeader() {},
  };
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, (error) => {
    if (error) failure = error instanceof Error ? error : new Error('helmet refused its options');
  });
  if (failure) throw failure;
  return headers;
}

/**
 * The security headers of every response, computed once by helmet: Express' responses get them from
 * {@link securityHeaders}, the fast routes and the error writer set them themselves (they skip Express'
 * middleware or may follow a page's policy). Computed once, setting them costs little (see
 * docs/performance.md, "Figures behind the code", "Security headers").
 */
export const SECURITY_HEADERS: HeaderList = headersOf(helmet(HELMET_OPTIONS));

/** Sets {@link SECURITY_HEADERS} on a response. */
export function setSecurityHeaders(response: {
  setHeader(name: string, value: string): unknown;
}): void {
  for (const [name, value] of SECURITY_HEADERS) response.setHeader(name, value);
}

/** Express middleware: every response starts with the security headers; a page then sets its own policy. */
export function securityHeaders() {
  return (_request: Request, response: Response, next: NextFunction): void => {
    setSecurityHeaders(response);
    next();
  };
}

/**
 * A response that the hosts of EMBED_FRAME_ORIGINS may frame says so with `frame-ancestors` alone: it goes
 * without the `X-Frame-Options: DENY` of every other response, which cannot name origins and would tell
 * a browser that reads it the opposite (one policy per response, the CSP's).
 */
export const FRAMED_WITHOUT: readonly string[] = ['X-Frame-Options'];

/**
 * The `Cross-Origin-Resource-Policy` of a response that another site's page may load as it is (an `<img>` of
 * a PNG dashboard). CORP cannot name origins (`same-origin`, `same-site` or `cross-origin` only), so an
 * embeddable response is `cross-origin`; every other response keeps helmet's `same-origin`.
 */
export const LOADABLE_ANYWHERE = 'cross-origin';

/** A policy as helmet writes it (and checks it: directive names, quoted keywords), for a page's `<meta>`. */
export function policyText(directives: PolicyDirectives): string {
  const [header] = headersOf(helmet.contentSecurityPolicy({ useDefaults: false, directives }));
  return header[1];
}

/** The `Content-Security-Policy` header of a page that loads what `directives` allow; it is never framed. */
export function pagePolicy(directives: PolicyDirectives): string {
  return policyText({ ...directives, ...NOT_FRAMED });
}
