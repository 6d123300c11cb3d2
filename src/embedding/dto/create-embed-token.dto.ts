import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsObject, IsString, Min, ValidateIf } from 'class-validator';
import type { EmbedTokenRequest } from '@/core/embedding/embed-token-plan';

/** Each field may be left out, not sent as null (which would read as "left out" without a word). */
const sent = (_: object, value: unknown): boolean => value !== undefined;

/**
 * `POST P/embed-tokens`'s body: its shape, checked here. What depends on the project (the item, its
 * parameters, the user fields) and on the settings (EMBED_TOKEN_MAX_MINUTES) is checked by
 * `planEmbedToken`, which `drey embed-token` calls too.
 */
export class CreateEmbedTokenDto implements EmbedTokenRequest {
  /** The dataset it opens (or `dashboard`). */
  @ValidateIf(sent)
  @IsString()
  dataset?: string;

  /** The dashboard it opens (or `dataset`). */
  @ValidateIf(sent)
  @IsString()
  dashboard?: string;

  /** Parameter name → value, as a JSON body selects it: locked, a request may not change them. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(sent)
  @IsObject()
  params?: Record<string, unknown>;

  /** Parameter name → value, as a JSON body selects it: used where a request gives none. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(sent)
  @IsObject()
  defaults?: Record<string, unknown>;

  /** User field → value: the attributes the project's SQL reads. */
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @ValidateIf(sent)
  @IsObject()
  user?: Record<string, unknown>;

  /** Who views, as the host application names them. */
  @ValidateIf(sent)
  @IsString()
  subject?: string;

  /** Minutes the token lives, from 1 to EMBED_TOKEN_MAX_MINUTES (default 10). */
  @ApiPropertyOptional({ type: 'integer', minimum: 1, default: 10 })
  @ValidateIf(sent)
  @IsInt()
  @Min(1)
  expiry_minutes?: number;
}
