import type { WidgetJson } from '@/core/parameters/widget-json';

/**
 * The legacy parameters endpoints take at most one selection, as the 0.4 service did (an option of
 * parameter-widgets' `ofItem`, which answers 400 for a second).
 */
export const LEGACY_ITEM_PARAMETERS = { atMostOneSelection: true } as const;

/** The legacy layout does not list `description`. */
export function toLegacyParametersResponse(widgets: WidgetJson[]): { parameters: object[] } {
  return {
    parameters: widgets.map((widget) => {
      const { description: _description, ...rest } = widget;
      return rest;
    }),
  };
}
