import type { WidgetJson } from '@/core/parameters/widget-json';
import type { ItemParametersOptions } from '@/parameter-widgets/parameter-widgets.service';

export function toParametersResponse(widgets: WidgetJson[]): { parameters: WidgetJson[] } {
  return { parameters: widgets };
}

/** The legacy parameters endpoints take at most one selection, as the 0.4 service did. */
export const LEGACY_ITEM_PARAMETERS: ItemParametersOptions = { atMostOneSelection: true };

/** The legacy layout does not list `description`. */
export function toLegacyParametersResponse(widgets: WidgetJson[]): { parameters: object[] } {
  return {
    parameters: widgets.map((widget) => {
      const { description: _description, ...rest } = widget;
      return rest;
    }),
  };
}
