/**
 * The cell styles of an Excel export (ECMA-376 part 1 §18.8): the index of each in `cellXfs`, which a
 * cell names with `s`, and the stylesheet that defines them.
 */

/** The highest scale of a DuckDB DECIMAL. */
const MAX_SCALE = 38;

/** Styles by what they format: 0 is plain (General). */
export const XLSX_STYLE = {
  /** Built-in format 14, a date. */
  date: 1,
  /** yyyy-mm-dd hh:mm:ss */
  timestamp: 2,
  /** hh:mm:ss */
  time: 3,
} as const;

/** The first decimal style, of scale 0; scale s is this plus s. */
const FIRST_DECIMAL = 4;
/** The first custom number format's id: ids below 164 are Excel's built-in formats. */
const FIRST_CUSTOM = 164;

/**
 * The style of a decimal of `scale` digits after the point: `0`, `0.0`, `0.00`, ..., so that 2320.80
 * shows as 2320.80, not General's 2320.8.
 */
export function xlsxDecimalStyle(scale: number): number {
  return FIRST_DECIMAL + Math.min(Math.max(scale, 0), MAX_SCALE);
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';

/** The custom formats: a timestamp, a time, then one per decimal scale. */
const FORMATS = [
  'yyyy-mm-dd hh:mm:ss',
  'hh:mm:ss',
  ...Array.from({ length: MAX_SCALE + 1 }, (_, scale) =>
    scale === 0 ? '0' : `0.${'0'.repeat(scale)}`,
  ),
];

function xf(numFmtId: number): string {
  return `<xf numFmtId="${numFmtId}" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>`;
}

/** The styles in XLSX_STYLE's order: plain, date (built-in 14), then the custom formats in order. */
const CELL_XFS = [
  '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>',
  xf(14),
  ...FORMATS.map((_, index) => xf(FIRST_CUSTOM + index)),
];

export const XLSX_STYLES =
  `${XML}<styleSheet xmlns="${MAIN}">` +
  `<numFmts count="${FORMATS.length}">` +
  FORMATS.map(
    (code, index) => `<numFmt numFmtId="${FIRST_CUSTOM + index}" formatCode="${code}"/>`,
  ).join('') +
  '</numFmts>' +
  '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>' +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  `<cellXfs count="${CELL_XFS.length}">${CELL_XFS.join('')}</cellXfs>` +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
  '</styleSheet>';
