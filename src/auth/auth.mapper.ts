import type { AccessToken } from '@/database/tables/access-tokens.entity';
import type { TokenRecordDto, TokenResponseDto } from '@/auth/dto/token-response.dto';
import type { IssuedToken } from '@/auth/tokens.service';
import { formatTimestamp } from '@/core/timestamps';

export function toTokenResponse(token: IssuedToken): TokenResponseDto {
  return {
    access_token: token.accessToken,
    token_type: 'bearer',
    username: token.username,
    is_admin: token.isAdmin,
    expiry_time: formatTimestamp(token.expiresAt),
  };
}

export function toTokenRecord(token: AccessToken, username: string): TokenRecordDto {
  return {
    token_id: token.id,
    title: token.title ?? '',
    username,
    created_at: formatTimestamp(token.createdAt),
    expires_at: token.expiresAt === null ? null : formatTimestamp(token.expiresAt),
  };
}
