import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsISO8601, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/**
 * A query value as a number for `@IsInt()`; an empty one (`offset=`) is no number (class-transformer's
 * `Number('')` made it 0, which the fuzzer saw accepted where the document says integer).
 */
function wholeNumber({ value }: { value: unknown }): unknown {
  return typeof value === 'string' ? (value.trim() === '' ? Number.NaN : Number(value)) : value;
}

export class AuditQueryDto {
  /** Only events of this user. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  actor?: string;

  /** Only this action, for example `login` or `user.delete`. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  action?: string;

  @IsOptional()
  @IsIn(['success', 'failure'])
  outcome?: 'success' | 'failure';

  /** ISO 8601 time: events at or after it. */
  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional()
  @IsISO8601()
  since?: string;

  /** ISO 8601 time: events before it. */
  @ApiPropertyOptional({ format: 'date-time' })
  @IsOptional()
  @IsISO8601()
  until?: string;

  /** Page size, 1 to 1000 (default 100). */
  @ApiPropertyOptional({ type: 'integer', default: 100 })
  @IsOptional()
  @Transform(wholeNumber)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  /** Events skipped (default 0). */
  @ApiPropertyOptional({ type: 'integer', default: 0 })
  @IsOptional()
  @Transform(wholeNumber)
  @IsInt()
  @Min(0)
  offset?: number;
}
