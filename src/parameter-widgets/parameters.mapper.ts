import type { WidgetJson } from '@/core/parameters/widget-json';

export function toParametersResponse(widgets: WidgetJson[]): { parameters: WidgetJson[] } {
  return { parameters: widgets };
}
