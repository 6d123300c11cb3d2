/**
 * Whether a request's `Prefer` header (RFC 7240) asks to be answered at once, before the work it starts is
 * done (`respond-async`). Our own few lines rather than `parse-prefer-header`, the one package for it: only
 * this one token is read, and the package camel-cases every preference through `lodash.camelcase` to
 * build an object of them all. Per RFC 7240 section 2: the header may be sent several times (Node joins
 * them with commas) and holds comma-separated preferences, each a case-insensitive token with an optional
 * `=value` and `;`-separated parameters, which are ignored here; a comma inside a quoted value separates
 * nothing.
 */
export function prefersAsync(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(',') : header;
  return splitOutsideQuotes(text, ',').some(
    (preference) =>
      splitOutsideQuotes(preference, ';')[0]?.split('=')[0]?.trim().toLowerCase() ===
      'respond-async',
  );
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\\' && quoted) i++;
    else if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
