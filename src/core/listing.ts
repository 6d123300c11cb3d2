/** At most this many names in one message: a project may have hundreds of options or items. */
export const LISTED_AT_MOST = 20;

/**
 * Names for an error message, quoted and bounded: `"a", "b" and 3 more`. The names come from the project,
 * never from the request, so a caller cannot make the message long.
 */
export function listSome(names: readonly string[], atMost = LISTED_AT_MOST): string {
  const quoted = names.slice(0, atMost).map((name) => JSON.stringify(name));
  const more = names.length - quoted.length;
  return more > 0 ? `${quoted.join(', ')} and ${more} more` : quoted.join(', ');
}
