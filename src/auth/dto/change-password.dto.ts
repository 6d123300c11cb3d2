import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class ChangePasswordDto {
  /** The current password. */
  @ApiProperty({ minLength: 1 })
  @IsString()
  @IsNotEmpty()
  old_password!: string;

  /** The new password (1 to 256 characters). */
  @ApiProperty({ minLength: 1 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  new_password!: string;
}
