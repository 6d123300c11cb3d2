import { Readable } from 'node:stream';
import { XLSX_STYLES } from '@/engine/export/xlsx-styles';
import { zipParts } from '@/engine/export/zip-writer';

/**
 * An Excel workbook (Office Open XML, ECMA-376) of one worksheet, streamed: the worksheet's rows come from
 * a file DuckDB wrote (export-sql.ts writes each row's XML in SQL, at the engine's speed), and
 * {@link zipParts} deflates them as they are read, pulled by the reply (back-pressure: nothing is read
 * ahead of what the client takes). A JavaScript workbook library builds every cell as an object, far
 * below the 300,000 rows/s asked of exports (see docs/performance.md, "Figures behind the code", "Writing
 * Excel exports"). Rows and cells carry no `r` reference, which ECMA-376 makes optional (§18.3.1.73,
 * §18.3.1.4): Excel, LibreOffice and openpyxl count them; DuckDB could not number the rows of an ordered
 * statement without a window that may reorder them.
 */
export function xlsxWorkbook(sheetName: string, header: string, rows: Readable): Readable {
  async function* sheet(): AsyncGenerator<Buffer> {
    try {
      yield Buffer.from(`${XML}<worksheet xmlns="${MAIN}"><sheetData>${header}`, 'utf8');
      for await (const chunk of rows) yield chunk as Buffer;
      yield Buffer.from('</sheetData></worksheet>', 'utf8');
    } finally {
      // Read to the end, failed, or the reader gone: the rows file is closed (its COPY stopped if running).
      rows.destroy();
    }
  }
  const output = Readable.from(
    zipParts([
      { name: '[Content_Types].xml', text: CONTENT_TYPES },
      { name: '_rels/.rels', text: ROOT_RELS },
      { name: 'xl/workbook.xml', text: workbook(sheetName) },
      { name: 'xl/_rels/workbook.xml.rels', text: WORKBOOK_RELS },
      { name: 'xl/styles.xml', text: XLSX_STYLES },
      { name: 'xl/worksheets/sheet1.xml', stream: sheet() },
    ]),
    { objectMode: false, highWaterMark: 256 * 1024 },
  );
  // A reader gone before the sheet was reached: the rows file is closed all the same.
  output.once('close', () => rows.destroy());
  return output;
}

/**
 * A sheet name Excel takes: at most 31 characters, none of `[]:*?/\`, not empty.
 */
export function sheetName(name: string): string {
  const cleaned = name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31);
  return cleaned === '' ? 'data' : cleaned;
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PACKAGE_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

const CONTENT_TYPES =
  `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
  '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
  '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
  '</Types>';

const ROOT_RELS =
  `${XML}<Relationships xmlns="${PACKAGE_REL}">` +
  `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/>` +
  '</Relationships>';

const WORKBOOK_RELS =
  `${XML}<Relationships xmlns="${PACKAGE_REL}">` +
  `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
  `<Relationship Id="rId2" Type="${REL}/styles" Target="styles.xml"/>` +
  '</Relationships>';

function workbook(name: string): string {
  const escaped = name.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  return (
    `${XML}<workbook xmlns="${MAIN}" xmlns:r="${REL}">` +
    `<sheets><sheet name="${escaped}" sheetId="1" r:id="rId1"/></sheets></workbook>`
  );
}
