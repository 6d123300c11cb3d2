import { Header, applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiResponse } from '@nestjs/swagger';
import { HttpReply } from '@/http/reply/http-reply';
import type { DashboardReply } from '@/dashboards/dashboards.service';
import { FRAMED_WITHOUT, LOADABLE_ANYWHERE } from '@/http/security-headers';
import { CONTENT_SECURITY_POLICY_HEADER, framedPolicy } from '@/dashboards/template/page-layout';

/**
 * A dashboard's answer as HTTP: the page's bytes with their type, length (written by `sendReply`), name and
 * ETag, or a 304 with no body when `If-None-Match` names the page's ETag.
 */
export function toDashboardHttp(reply: DashboardReply): HttpReply {
  const headers: Record<string, string> = {};
  let without: readonly string[] = [];
  if (reply.etag) headers.ETag = reply.etag;
  // Who may frame the page, and load it elsewhere: a 304 says it too, as a browser refreshes the headers of
  // the copy it keeps with those of the 304 (a same-origin CORP there would block the next <img>).
  if (reply.framedBy.length > 0) {
    headers['Content-Security-Policy'] = framedPolicy(reply.framedBy);
    without = FRAMED_WITHOUT;
  }
  if (reply.crossOrigin) headers['Cross-Origin-Resource-Policy'] = LOADABLE_ANYWHERE;
  if (reply.kind === 'not-modified') return new HttpReply(304, headers, null, without);
  headers['Content-Type'] = reply.contentType;
  headers['Content-Disposition'] = `inline; filename="${reply.name}.${reply.format}"`;
  return new HttpReply(200, headers, reply.body, without);
}

/**
 * Headers and documentation of a dashboard result. A browser may keep the page for its user alone and asks
 * again each time (`private, no-cache`): the ETag makes that a 304 while the page is the same. The page's
 * own policy is repeated as a header in place of the API's (the other security headers, as on every
 * response, come from `http/security-headers.ts`).
 */
export const DashboardResult = () =>
  applyDecorators(
    Header('Cache-Control', 'private, no-cache'),
    Header('Content-Security-Policy', CONTENT_SECURITY_POLICY_HEADER),
    ApiProduces('text/html', 'image/png'),
    ApiOkResponse({
      description:
        "The rendered dashboard: HTML or PNG, as the catalog entry's result_format says, with an ETag when it is kept",
      content: {
        'text/html': { schema: { type: 'string' } },
        'image/png': { schema: { type: 'string', format: 'binary' } },
      },
    }),
  );

/** The 304 of a GET whose `If-None-Match` names the page's current ETag. */
export const DashboardNotModified = () =>
  ApiResponse({ status: 304, description: 'The page named by If-None-Match is current; no body' });
