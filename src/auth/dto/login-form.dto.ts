import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

/**
 * OAuth 2.0 password grant form (`application/x-www-form-urlencoded` or `multipart/form-data`). The
 * service, not the validation pipe, reports a missing username or password (400 `invalid_request`), so
 * the fields are optional here and documented as required.
 */
export class LoginFormDto {
  /** The user's name. */
  @ApiProperty({ required: true, minLength: 1 })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  username?: string;

  /** The user's password. */
  @ApiProperty({ required: true, minLength: 1, format: 'password' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  password?: string;

  /** Must be `password` when given. */
  @ApiPropertyOptional({ enum: ['password'] })
  @IsOptional()
  @IsString()
  grant_type?: string;

  /** Accepted and ignored (empty when absent). */
  @IsOptional()
  @IsString()
  scope?: string;

  /** Accepted and ignored. */
  @IsOptional()
  @IsString()
  client_id?: string;

  /** Accepted and ignored. */
  @IsOptional()
  @IsString()
  client_secret?: string;
}
