/** Access token response (current layout). */
export class TokenResponseDto {
  /** Encoded JSON web token. */
  access_token!: string;
  /** Always `bearer`. */
  token_type!: 'bearer';
  username!: string;
  is_admin!: boolean;
  /** UTC, six fractional digits, `Z` (`9999-12-31T23:59:59.999999Z` for a token that never expires). */
  expiry_time!: string;
}

/** Access token response of the legacy layout: no `is_admin`, `+00:00` offset. */
export class LegacyTokenResponseDto {
  access_token!: string;
  token_type!: 'bearer';
  username!: string;
  /** UTC, six fractional digits, `+00:00`. */
  expiry_time!: string;
}

/** A named token. */
export class TokenRecordDto {
  /** The token id (UUID), used to revoke it. */
  token_id!: string;
  title!: string;
  username!: string;
  created_at!: string;
  /** Null when the token never expires. */
  expires_at!: string | null;
}
