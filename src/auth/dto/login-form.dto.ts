import { IsOptional, IsString, MaxLength } from 'class-validator';

/** OAuth 2.0 password grant form (`application/x-www-form-urlencoded` or `multipart/form-data`). */
export class LoginFormDto {
  /** The user's name. Required. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  username?: string;

  /** The user's password. Required. */
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  password?: string;

  /** Must be `password` when given. */
  @IsOptional()
  @IsString()
  grant_type?: string;

  /** Accepted and ignored. */
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
