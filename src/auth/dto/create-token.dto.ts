import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsNotEmpty, IsOptional, IsString, MaxLength, Min } from 'class-validator';

export class CreateTokenDto {
  /** Title of a named token. Without it, a temporary token is created and `expiry_minutes` is ignored. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  title?: string;

  /** Minutes until a named token expires (for example 43200 for 30 days); absent or null: never. */
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  expiry_minutes?: number | null;
}
