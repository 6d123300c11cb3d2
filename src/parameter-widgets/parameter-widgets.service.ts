import { Injectable } from '@nestjs/common';
import type { Caller } from '@/core/caller';
import { callerView, requireScope } from '@/core/project/scope';
import { choosableWidgets, embedRequest, refuseEmbedded } from '@/core/embedding/embed-request';
import { checkAtMostOneSelection } from '@/core/parameters/selection-request';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import type { WidgetJson } from '@/core/parameters/widget-json';
import { ItemKind, findItem } from '@/core/project/items';
import { ServedProject } from '@/core/project/served-project';

/** Limits an endpoint sets on a dataset's or dashboard's parameters request. */
export interface ItemParametersOptions {
  /** At most one of the item's own parameters may be selected (a 400 otherwise). */
  atMostOneSelection?: boolean;
}

/** What the parameters endpoints answer: the widgets of the project, a dataset or a dashboard. */
@Injectable()
export class ParameterWidgetsService {
  constructor(
    private readonly parameters: ParameterCatalogService,
    private readonly served: ServedProject,
  ) {}

  /** `P/parameters`: every parameter of the project, in the project's order. */
  async ofProject(caller: Caller, request: ParameterRequest): Promise<WidgetJson[]> {
    refuseEmbedded(caller, "the project's parameters");
    const catalog = await this.parameters.catalog();
    return catalog.widgets(catalog.names(), request, callerView(caller));
  }

  /** A dataset's or dashboard's parameters, in the order it declares them, after its scope check. */
  async ofItem(
    kind: ItemKind,
    name: string,
    caller: Caller,
    request: ParameterRequest,
    options: ItemParametersOptions = {},
  ): Promise<WidgetJson[]> {
    const item = findItem(this.served.current, kind, name, caller);
    requireScope(item.scope, caller, `the ${kind} "${item.name}"`);
    if (options.atMostOneSelection) checkAtMostOneSelection(request, item.parameters);
    const catalog = await this.parameters.catalog();
    // An embedding's locked parameters are applied, and are not widgets its holder may choose.
    return choosableWidgets(
      caller,
      catalog.widgets(
        item.parameters,
        embedRequest(caller, item.parameters, request),
        callerView(caller),
      ),
    );
  }
}
