/** Drey's pages of a sign-in (SignInController): one per interaction the library starts. */
export const SIGN_IN_PREFIX = '/oauth/sign-in';

export function signInPath(uid: string): string {
  return `${SIGN_IN_PREFIX}/${encodeURIComponent(uid)}`;
}

/**
 * The library's endpoints (AuthorizationServer's routes) and what they end in, as Express paths. Their
 * bodies are the library's to read (it bounds them itself), not the application's parsers'.
 */
export const OAUTH_LIBRARY_PATHS = [
  '/oauth/authorize',
  '/oauth/authorize/*rest',
  '/oauth/token',
  '/oauth/register',
  '/oauth/revoke',
  '/oauth/jwks',
  '/oauth/userinfo',
  '/oauth/logout',
  '/oauth/logout/*rest',
  '/oauth/par',
];

/** Whether a path is one of {@link OAUTH_LIBRARY_PATHS}. */
export function isOAuthLibraryPath(path: string): boolean {
  return (
    /^\/oauth\/(authorize|token|register|revoke|jwks|userinfo|logout|par)$/.test(path) ||
    /^\/oauth\/(authorize|logout)\/[^/]+$/.test(path)
  );
}
