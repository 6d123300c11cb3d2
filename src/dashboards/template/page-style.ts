/**
 * The page's stylesheet. System fonts only (a page may load nothing, so no web fonts); the Docker image and
 * CI install DejaVu and Liberation so that PNGs look the same everywhere.
 */
export const PAGE_CSS = `
:root {
  --ink: #1f2430; --muted: #5b6372; --line: #e3e6eb; --bg: #f4f5f7; --panel: #fff;
}
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", "DejaVu Sans", Arial, sans-serif;
}
.page { max-width: 1160px; margin: 0 auto; padding: 28px 24px 20px; }
.page-header { margin-bottom: 20px; }
.eyebrow {
  font-size: 12px; letter-spacing: .08em; text-transform: uppercase; color: var(--muted); font-weight: 600;
}
h1 { font-size: 26px; line-height: 1.2; margin: 4px 0; font-weight: 700; }
.description { margin: 0 0 14px; color: var(--muted); font-size: 15px; max-width: 80ch; }
.selections { display: flex; flex-wrap: wrap; gap: 8px; margin: 0; }
.selections > div {
  background: var(--panel); border: 1px solid var(--line); border-radius: 999px; padding: 4px 12px;
  font-size: 13px;
}
.selections dt { display: inline; color: var(--muted); }
.selections dt::after { content: ": "; }
.selections dd { display: inline; margin: 0; font-weight: 600; }
.board { display: grid; grid-template-columns: repeat(12, minmax(0, 1fr)); gap: 16px; }
.panel {
  background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px;
  min-width: 0;
}
.span-12 { grid-column: span 12; }
.span-6 { grid-column: span 6; }
.span-4 { grid-column: span 4; }
.span-3 { grid-column: span 3; }
@media screen and (max-width: 760px) {
  .span-6, .span-4, .span-3 { grid-column: span 12; }
}
.panel h2 { font-size: 15px; margin: 0; font-weight: 600; }
.panel .subtitle { margin: 2px 0 0; color: var(--muted); font-size: 13px; }
.chart-box { position: relative; width: 100%; margin-top: 12px; }
.legend {
  list-style: none; padding: 0; margin: 10px 0 0; display: flex; flex-wrap: wrap; gap: 4px 16px;
  font-size: 12px; color: var(--muted);
}
.swatch {
  display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px;
  vertical-align: -1px;
}
.table-wrap { overflow-x: auto; margin-top: 8px; }
table.data { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.data th, table.data td { padding: 7px 10px; text-align: left; border-bottom: 1px solid var(--line); }
table.data thead th {
  font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted);
  font-weight: 600; border-bottom: 2px solid var(--line);
}
table.data .num { text-align: right; }
table.data tbody tr:nth-child(even) { background: #fafbfc; }
table.data tfoot th, table.data tfoot td { font-weight: 700; border-top: 2px solid var(--ink); border-bottom: 0; }
/* A headline figure keeps its own height beside a taller chart or table; panels of a kind share a row's. */
.panel.stat { align-self: start; }
.stat-label { color: var(--muted); font-size: 13px; }
.stat-value {
  font-size: clamp(20px, 2.3vw, 28px); font-weight: 700; margin-top: 2px; white-space: nowrap;
  font-variant-numeric: tabular-nums; overflow: hidden; text-overflow: ellipsis;
}
.stat-note { color: var(--muted); font-size: 12px; margin-top: 2px; }
.empty { color: var(--muted); font-style: italic; margin: 12px 0 4px; }
.note { color: var(--muted); font-size: 12px; margin: 8px 0 0; }
.page-footer { margin-top: 20px; color: var(--muted); font-size: 12px; text-align: right; }
@media print {
  @page { margin: 14mm; }
  body { background: #fff; font-size: 10.5pt; }
  .page { max-width: none; padding: 0; }
  .board { gap: 10px; }
  .panel { border-color: #c9ced6; break-inside: avoid; padding: 12px 14px; }
  .stat-value { font-size: 15pt; }
  .table-panel { break-inside: auto; }
  .selections > div { border-color: #c9ced6; }
  .table-wrap { overflow: visible; }
  table.data thead { display: table-header-group; }
  table.data tr { break-inside: avoid; }
  table.data tbody tr:nth-child(even) { background: none; }
}
`;
