import type { WidgetJson } from '@/core/parameters/widget-json';
import { selectionSchema } from '@/mcp/mcp-schemas';

/**
 * The compact text copies of the tools' answers: what an assistant that reads `content` rather than
 * `structuredContent` sees. One line per row or item, nothing repeated per row.
 */

type Cell = unknown;

function cellText(value: Cell): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // A cell stays on its line and in its column.
  return text.replace(/[\r\n]+/g, ' ').replace(/\|/g, '\\|');
}

/** A page of rows as a table: the column names, then a line per row, cells separated by ` | `. */
export function rowsTable(columns: string[], rows: Cell[][]): string {
  return [columns.join(' | '), ...rows.map((row) => row.map(cellText).join(' | '))].join('\n');
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
