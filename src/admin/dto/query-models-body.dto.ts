import { IsBoolean, IsInt, IsObject, IsOptional, IsString, ValidateBy } from 'class-validator';

/** The refusal of a request without SQL, or with SQL that is not a string (`checkSql` answers it too). */
export const SQL_REQUIRED = 'The SQL query is required (x_sql_query, or sql_query in a JSON body)';

/** The refusal of a built-in of the wrong JSON type, worded as `checkJsonBuiltins` words it. */
const inJson = (what: string) => ({ message: `$property must be ${what} in a JSON body` });

/**
 * `POST P/query-models`'s JSON body: its fixed fields, checked here. Null is "not given" for each (as it was
 * before this was a DTO). The selections in `parameters` differ per project and are read by the parameters
 * domain (`parseBodySelections`); the SQL's length and read-only rules by `checkSql` and the engine. Other
 * keys are ignored (`@ValidateDtos('ignore')` on the route), as the body has always taken them.
 */
export class QueryModelsBodyDto {
  /** Read-only SQL over the models. Required unless `x_sql_query` is in the query string. */
  @IsOptional()
  @IsString({ message: SQL_REQUIRED })
  sql_query?: string | null;

  /** Parameter name → selection, as a JSON body selects it. */
  @IsOptional()
  @IsObject({ message: 'The body must be a JSON object of parameter selections' })
  parameters?: Record<string, unknown> | null;

  /** `records`, `rows` or `columns`. */
  @IsOptional()
  @IsString(inJson('a string'))
  x_orientation?: string | null;

  /** Column names to keep. */
  @IsOptional()
  @ValidateBy(
    {
      name: 'isColumnList',
      validator: {
        validate: (value) =>
          Array.isArray(value) && value.every((item) => typeof item === 'string'),
      },
    },
    inJson('an array of column names'),
  )
  x_select?: string[] | null;

  /** Rows returned. */
  @IsOptional()
  @IsInt(inJson('a whole number'))
  x_limit?: number | null;

  /** Rows skipped. */
  @IsOptional()
  @IsInt(inJson('a whole number'))
  x_offset?: number | null;

  @IsOptional()
  @IsString(inJson('a string'))
  x_parent_param?: string | null;

  @IsOptional()
  @IsBoolean(inJson('true or false'))
  x_verify_params?: boolean | null;
}
