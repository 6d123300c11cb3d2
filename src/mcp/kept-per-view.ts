/**
 * Values worked out per caller view and kept while their source (a parameter catalog: a build makes a new
 * one) lives, at most `max` views per source, the oldest going first. Every MCP request builds its server
 * from the caller's tool subjects; this keeps that work to once per view and build. Pure.
 */
export class KeptPerView<Source extends object, Value> {
  private readonly kept = new WeakMap<Source, Map<string, Value>>();

  constructor(private readonly max: number) {}

  get(source: Source, view: string, make: () => Value): Value {
    let views = this.kept.get(source);
    if (!views) {
      views = new Map();
      this.kept.set(source, views);
    }
    const found = views.get(view);
    if (found !== undefined) return found;
    const value = make();
    if (views.size >= this.max) views.delete(views.keys().next().value as string);
    views.set(view, value);
    return value;
  }
}
