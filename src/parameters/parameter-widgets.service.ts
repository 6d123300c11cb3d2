import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '@/core/caller';
import { callerView, requireScope } from '@/core/scope';
import { checkLegacySelectionCount } from '@/core/parameters/selection-request';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import { ParametersService } from '@/parameters/parameters.service';
import type { WidgetJson } from '@/core/parameters/widget-json';
import { ItemKind, findItem } from '@/core/project/items';
import type { Project } from '@/core/project/project';
import { PROJECT } from '@/project/project.tokens';

/** What the parameters endpoints answer: the widgets of the project, a dataset or a dashboard. */
@Injectable()
export class ParameterWidgetsService {
  constructor(
    private readonly parameters: ParametersService,
    @Inject(PROJECT) private readonly project: Project,
  ) {}

  /** `P/parameters`: every parameter of the project, in the project's order. */
  async ofProject(caller: Caller, request: ParameterRequest): Promise<WidgetJson[]> {
    const catalog = await this.parameters.catalog();
    return catalog.widgets(catalog.names(), request, callerView(caller));
  }

  /** A dataset's or dashboard's parameters, in the order it declares them, after its scope check. */
  async ofItem(
    kind: ItemKind,
    name: string,
    caller: Caller,
    request: ParameterRequest,
  ): Promise<WidgetJson[]> {
    const legacy = request.layout === 'legacy';
    const item = findItem(this.project, kind, name, legacy);
    requireScope(item.scope, caller, `the ${kind} "${item.name}"`);
    // The legacy layout takes at most one selection on a parameters request.
    if (legacy) checkLegacySelectionCount(request, item.parameters);
    const catalog = await this.parameters.catalog();
    return catalog.widgets(item.parameters, request, callerView(caller));
  }
}
