import type { ColumnCategory, ColumnSpec, ColumnType } from '@/core/project/project';
import {
  checkKeys,
  eachMapping,
  FileContext,
  optionalText,
  oneOf,
  pathOf,
  UniqueNames,
} from '@/core/project/yaml-fields';

const CATEGORIES: readonly ColumnCategory[] = ['dimension', 'measure', 'misc'];
const COLUMN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const DATABASE_TYPES: Record<ColumnType, string> = {
  string: 'VARCHAR',
  integer: 'BIGINT',
  number: 'DOUBLE',
  // DuckDB's own default for DECIMAL without precision.
  decimal: 'DECIMAL(18,3)',
  boolean: 'BOOLEAN',
  date: 'DATE',
  datetime: 'TIMESTAMP',
  time: 'TIME',
};

/** `decimal(10,2)` sets the precision a seed or source column is stored with. */
const DECIMAL_WITH_PRECISION = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/;

function parseType(
  at: FileContext,
  path: string,
  raw: unknown,
): { type: ColumnType; databaseType: string } | undefined {
  if (typeof raw === 'string') {
    if (raw in DATABASE_TYPES) {
      const type = raw as ColumnType;
      return { type, databaseType: DATABASE_TYPES[type] };
    }
    const decimal = DECIMAL_WITH_PRECISION.exec(raw);
    if (decimal) {
      const precision = Number(decimal[1]);
      const scale = Number(decimal[2]);
      if (precision >= 1 && precision <= 38 && scale <= precision) {
        return { type: 'decimal', databaseType: `DECIMAL(${precision},${scale})` };
      }
      at.problems.add(at.file, path, 'decimal(p,s) needs 1 <= p <= 38 and s <= p');
      return undefined;
    }
  }
  at.problems.add(
    at.file,
    path,
    `must be one of ${Object.keys(DATABASE_TYPES).join(', ')} (or decimal(p,s))`,
  );
  return undefined;
}

/** Parses the `columns:` list of a model's or seed's `.yml` file. */
export function parseColumns(at: FileContext, raw: unknown): ColumnSpec[] {
  const columns: ColumnSpec[] = [];
  const names = new UniqueNames('column');
  eachMapping(at, 'columns', raw, (item, path) => {
    checkKeys(at, path, item, ['name', 'type', 'description', 'category', 'condition']);
    const name = item.name;
    if (typeof name !== 'string' || !COLUMN_NAME.test(name)) {
      at.problems.add(at.file, pathOf(path, 'name'), 'must be a column name');
      return;
    }
    const type =
      item.type === undefined ? undefined : parseType(at, pathOf(path, 'type'), item.type);
    const category = oneOf(at, pathOf(path, 'category'), item.category ?? 'misc', CATEGORIES);
    const description = optionalText(at, pathOf(path, 'description'), item.description);
    const condition = optionalText(at, pathOf(path, 'condition'), item.condition);
    if (!names.claim(at, pathOf(path, 'name'), name)) return;
    const column: ColumnSpec = { name, description, category: category ?? 'misc' };
    if (type) {
      column.type = type.type;
      column.databaseType = type.databaseType;
    }
    if (condition) column.condition = condition;
    columns.push(column);
  });
  return columns;
}
