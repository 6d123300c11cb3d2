import type { Caller, EmbedValue } from '@/core/caller';
import { ForbiddenError } from '@/core/errors';
import { InvalidSelectionError } from '@/core/parameters/parameter-errors';
import type { ParameterRequest, RawSelection } from '@/core/parameters/selection-request';

function asRaw(value: EmbedValue): RawSelection {
  return { source: 'body', value };
}

/**
 * The request an embedding's caller makes of its item: a locked parameter may not be sent (400), the
 * locked values are selected, and the defaults fill what the request leaves out. Unchanged for any other
 * caller.
 */
export function embedRequest(
  caller: Caller,
  parameters: readonly string[],
  request: ParameterRequest,
): ParameterRequest {
  const grant = caller.embed;
  if (!grant) return request;
  const locked = Object.keys(grant.locked);
  for (const name of locked) {
    if (!parameters.includes(name)) {
      throw new InvalidSelectionError(
        `The embedding token locks "${name}", which the ${grant.kind} "${grant.name}" does not have`,
      );
    }
    if (request.selections.has(name) || request.parentParam === name) {
      throw new InvalidSelectionError(
        `Parameter "${name}" is locked by the embedding token and cannot be changed`,
      );
    }
  }
  const selections = new Map(request.selections);
  const injected = new Set<string>();
  for (const [name, value] of Object.entries(grant.locked)) {
    selections.set(name, asRaw(value));
    injected.add(name);
  }
  for (const [name, value] of Object.entries(grant.defaults)) {
    if (!selections.has(name) && parameters.includes(name)) {
      selections.set(name, asRaw(value));
      injected.add(name);
    }
  }
  return { ...request, selections, injected };
}

/** The widgets an embedding's caller may choose among: its locked parameters are not shown. */
export function choosableWidgets<W extends { name: string }>(caller: Caller, widgets: W[]): W[] {
  const locked = caller.embed?.locked;
  return locked ? widgets.filter((widget) => !(widget.name in locked)) : widgets;
}

/** Refuses an embedding's caller what belongs to no item (the project's parameters, say). */
export function refuseEmbedded(caller: Caller, what: string): void {
  if (caller.embed) {
    throw new ForbiddenError(
      `An embedding token opens only its ${caller.embed.kind} "${caller.embed.name}", not ${what}`,
    );
  }
}
