import type { IncomingMessage } from 'node:http';

const CHALLENGE = Symbol('drey:bearer-challenge');
type WithChallenge = IncomingMessage & { [CHALLENGE]?: string };

/**
 * The `WWW-Authenticate` challenge of a 401 on this request, when its route says more than `Bearer`: the
 * MCP endpoint names its Protected Resource Metadata (RFC 9728) when OIDC is configured, so that an
 * assistant can find the identity provider to sign a person in. Set before the guards run (by the route's
 * middleware), read by the error filter, the one writer of errors.
 */
export function setBearerChallenge(request: IncomingMessage, challenge: string): void {
  (request as WithChallenge)[CHALLENGE] = challenge;
}

export function bearerChallengeOf(request: IncomingMessage): string {
  return (request as WithChallenge)[CHALLENGE] ?? 'Bearer';
}
