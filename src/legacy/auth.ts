import { formatLegacyTimestamp } from '@/legacy/timestamps';

/** What the legacy login answer reads of an issued token (auth/tokens.service.ts's IssuedToken). */
export interface LegacyTokenInput {
  accessToken: string;
  username: string;
  expiresAt: Date | null;
}

/** The legacy login answer (`POST /service-v0/{project}/v{major}/token`). */
export interface LegacyTokenResponse {
  access_token: string;
  token_type: 'bearer';
  username: string;
  expiry_time: string;
}

/** The same token as the current layout's login, without `is_admin` and with a `+00:00` expiry. */
export function toLegacyTokenResponse(token: LegacyTokenInput): LegacyTokenResponse {
  return {
    access_token: token.accessToken,
    token_type: 'bearer',
    username: token.username,
    expiry_time: formatLegacyTimestamp(token.expiresAt),
  };
}
