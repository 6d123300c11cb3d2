import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString } from 'class-validator';

export class ChangePasswordDto {
  /** The current password. */
  @ApiProperty({ minLength: 1 })
  @IsString()
  @IsNotEmpty()
  old_password!: string;

  /**
   * The new password. Its length is the password policy's, checked by the service with one code for every
   * password problem (400 `invalid_password`); the document states the configured bounds (app.ts).
   */
  @ApiProperty({ minLength: 1 })
  @IsString()
  @IsNotEmpty()
  new_password!: string;
}
