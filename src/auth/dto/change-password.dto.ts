import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class ChangePasswordDto {
  /** The current password. */
  @IsString()
  @IsNotEmpty()
  old_password!: string;

  /** The new password (1 to 256 characters). */
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  new_password!: string;
}
