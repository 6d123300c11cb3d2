import type { WidgetJson } from '@/core/parameters/widget-json';
import { selectionSchema } from '@/mcp/mcp-schemas';

/**
 * The compact text copies of the tools' answers: what an assistant that reads `content` rather than
 * `structuredContent` sees. One line per row or item, nothing repeated per row.
 */

type Cell = unknown;

/** What a cell may not hold as it is: it stays on its line and in its column. */
const OUT_OF_PLACE = /[\r\n|]/;

function cellText(value: Cell): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' && Number.isFinite(value)
        ? String(value)
        : JSON.stringify(value);
  // Most cells hold none of these: tested once, rather than copied by two replacements.
  if (!OUT_OF_PLACE.test(text)) return text;
  return text.replace(/[\r\n]+/g, ' ').replace(/\|/g, '\\|');
}

/**
 * A page of rows as a table: the column names, then a line per row, cells separated by ` | `. Built by
 * appending, with no array per row: it is made for every page an assistant reads.
 */
export function rowsTable(columns: string[], rows: Cell[][]): string {
  let text = columns.join(' | ');
  for (const row of rows) {
    text += '\n';
    for (let index = 0; index < row.length; index++) {
      if (index > 0) text += ' | ';
      text += cellText(row[index]);
    }
  }
  return text;
}

/** Which rows a page holds, how many were left out, and how to read the next page. */
export function pageNote(page: {
  offset: number;
  returned: number;
  total: number;
  nextOffset: number | null;
  tool: string;
}): string {
  const { offset, returned, total, nextOffset, tool } = page;
  const range = returned === 0 ? 'no rows' : `rows ${offset + 1}-${offset + returned}`;
  const leftOut = total - returned;
  const head = `${range} of ${total}`;
  if (nextOffset === null) return leftOut === 0 ? `${head}.` : `${head}; ${leftOut} left out.`;
  return `${head}; ${leftOut} left out. Next page: call ${tool} again with offset=${nextOffset}.`;
}

/** A parameter on one line: its name and what it takes, as the input schema describes it. */
export function widgetLine(widget: WidgetJson): string {
  const { description } = selectionSchema(widget, null) as { description: string };
  return `- ${widget.name} (${widget.widget_type}): ${description}`;
}
