import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';

export class CreateTokenDto {
  /**
   * Title of a named token. Without it, a temporary token is created and `expiry_minutes` is ignored. Null
   * is refused (400): `@IsOptional()` would let it through as "no title", turning a named token into a
   * temporary one without a word.
   */
  @ApiPropertyOptional({ minLength: 1 })
  @ValidateIf((_, value) => value !== undefined)
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
