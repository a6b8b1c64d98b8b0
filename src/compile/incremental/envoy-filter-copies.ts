/**
 * Endpoint rounds in a mesh with EnvoyFilters: a group the round rebuilds (the outbound listeners of
 * a headless service's pods, an inbound group whose named target ports moved) may have patched
 * copies (../envoy-filter/groups.ts), which the classes list in its place. Each copy is made again
 * from the rebuilt original, as the compile made it, and checked as the compile checks a copy
 * (../envoy-filter/check.ts) for every class that lists it. A patch that panics, a copy with a
 * problem (where a full compile would leave an EnvoyFilter out), or a compile that left one out
 * already sends the round to a full compile: only that says which EnvoyFilters apply then.
 */
import { classProblems, GroupReferences } from '../envoy-filter/check.js';
import type { EnvoyFilterCopies } from '../envoy-filter/groups.js';
import type { GroupId, ProxyClass, ResourceTable } from '../types.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import type { DeltaBuilder } from './delta.js';

/** What the copies of one compile need in its endpoint rounds, found once per compile. */
export interface CopyIndex {
  readonly copies: EnvoyFilterCopies;
  /** Original → the copies made of it. */
  readonly copiesOf: ReadonlyMap<GroupId, readonly GroupId[]>;
  /** Copy → the distinct group lists of the classes that list it. */
  readonly listedBy: ReadonlyMap<GroupId, readonly (readonly GroupId[])[]>;
}

export function copyIndex(copies: EnvoyFilterCopies, classes: readonly ProxyClass[]): CopyIndex {
  const copiesOf = new Map<GroupId, GroupId[]>();
  for (const [copy, recipe] of copies.copies) {
    const list = copiesOf.get(recipe.from);
    if (list) list.push(copy);
    else copiesOf.set(recipe.from, [copy]);
  }
  const listedBy = new Map<GroupId, (readonly GroupId[])[]>();
  if (copies.copies.size > 0)
    for (const c of classes)
      for (const g of c.groups) {
        if (!copies.copies.has(g)) continue;
        const lists = listedBy.get(g);
        if (!lists) listedBy.set(g, [c.groups]);
        else if (!lists.includes(c.groups)) lists.push(c.groups);
      }
  return { copies, copiesOf, listedBy };
}

/** Makes the copies of the originals one endpoint round rebuilds again, then checks them. */
export class CopyRepatcher {
  /** The round's originals and copies, over the tables (an original no class lists is not in them). */
  private readonly overrides = new Map<GroupId, ResourceTable>();
  private readonly made: { readonly copy: GroupId; readonly from: GroupId }[] = [];
  private panicked = false;
  /** The originals whose copies were made again. */
  readonly handled = new Set<GroupId>();

  constructor(
    private readonly tables: ReadonlyMap<GroupId, ResourceTable>,
    private readonly index: CopyIndex,
    private readonly builder: DeltaBuilder,
  ) {}

  /** After `original` was rebuilt as `content`: its copies made again. False: compile in full. */
  rebuilt(original: GroupId, content: ResourceTable): boolean {
    // Its copies are not known when an EnvoyFilter was left out (refused); every original has some.
    if (this.index.copies.refused) return false;
    const copies = this.index.copiesOf.get(original);
    if (!copies?.length) return false;
    this.handled.add(original);
    this.overrides.set(original, content);
    const onPanic = () => {
      this.panicked = true;
    };
    for (const copy of copies) {
      const recipe = this.index.copies.copies.get(copy);
      const current = this.tables.get(copy);
      if (!recipe || !current) return false;
      const next = recipe.patch(content, onPanic);
      for (const type of XDS_TYPES)
        if (next[type].size > 0 || current[type].size > 0) this.builder.replaceAll(copy, type, next[type]);
      this.overrides.set(copy, next);
      this.made.push({ copy, from: original });
    }
    return !this.panicked;
  }

  /** Whether every copy made again passes the compile's check in every class that lists it. */
  checked(): boolean {
    if (this.made.length === 0) return true;
    const get = (g: GroupId) => this.overrides.get(g) ?? this.tables.get(g);
    const view = { get } as ReadonlyMap<GroupId, ResourceTable>;
    const references = new GroupReferences(view);
    for (const { copy, from } of this.made) {
      const copiedFrom = new Map([[copy, from]]);
      for (const groups of this.index.listedBy.get(copy) ?? [])
        if (classProblems(view, { groups, copiedFrom }, references).length > 0) return false;
    }
    return true;
  }
}
