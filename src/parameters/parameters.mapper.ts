import type { WidgetJson } from '@/core/parameters/widget-json';

export function toParametersResponse(widgets: WidgetJson[]): { parameters: WidgetJson[] } {
  return { parameters: widgets };
}

/** The legacy layout does not list `description`. */
export function toLegacyParametersResponse(widgets: WidgetJson[]): { parameters: object[] } {
  return {
    parameters: widgets.map((widget) => {
      const { description: _description, ...rest } = widget;
      return rest;
    }),
  };
}
