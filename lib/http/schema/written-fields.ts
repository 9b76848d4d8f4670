import { blank, transformerStorage } from '../../json';
import { readShape, type PropertyShape } from './read-shape';

/** One field of a class as its answers are written: its name and its declaration, if any. */
export interface WrittenField {
  readonly name: string;
  /** Its class-validator declaration, or null: a field only `new Class()` or `@Expose` tells of (any JSON, optional). */
  readonly property: PropertyShape | null;
}

/** What a class's answers carry: the fields written, in order, and the declared ones never written. */
export interface WrittenFields {
  readonly written: readonly WrittenField[];
  /** Declared (read from input) but `@Exclude`d from answers: the document says `writeOnly`. */
  readonly excluded: readonly PropertyShape[];
}

const cache = new WeakMap<Function, WrittenFields>();

/**
 * The one rule for which fields of a class an answer carries, read by both the declared writer
 * and the class's OpenAPI component, so the two cannot disagree: the fields a
 * `new Class()` has (field initializers, constructor assignments, and under tsc's ES2022 class
 * fields a bare `note!: string` too), then the class-validator declared ones, then class-
 * transformer's `@Expose`d ones, less the `@Exclude`d (unless `toClassOnly`); in that order.
 * A field no class-validator decorator declares has no kind: written as any JSON, optional, and
 * documented as `readOnly` (no input reads it).
 */
export function writtenFields(cls: Function): WrittenFields {
  let fields = cache.get(cls);
  if (fields === undefined) {
    fields = readWritten(cls);
    cache.set(cls, fields);
  }
  return fields;
}

function readWritten(cls: Function): WrittenFields {
  const shape = readShape(cls);
  const storage = transformerStorage();
  const excluded = new Set(
    (storage.getExcludedMetadatas(cls) as { propertyName?: string; options?: object }[])
      .filter((e) => e.propertyName !== undefined && !('toClassOnly' in (e.options ?? {})))
      .map((e) => e.propertyName!),
  );
  const names = Object.keys(blank(cls) ?? {});
  for (const p of shape.properties) if (!names.includes(p.name)) names.push(p.name);
  for (const e of storage.getExposedMetadatas(cls))
    if (!names.includes(e.propertyName)) names.push(e.propertyName);
  const byName = new Map(shape.properties.map((p) => [p.name, p]));
  return Object.freeze({
    written: Object.freeze(
      names
        .filter((n) => !excluded.has(n))
        .map((name) => Object.freeze({ name, property: byName.get(name) ?? null })),
    ),
    excluded: Object.freeze(shape.properties.filter((p) => excluded.has(p.name))),
  });
}
