/** The media type of a Content-Type header (or of one Accept entry), without parameters, lower-cased. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0].trim().toLowerCase();
}
