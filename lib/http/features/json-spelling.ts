import { IS_ENUM } from '../../json/validator-names';
import { classSpelling, enumSpelling, unionOf } from '../../json';
import type { Capability } from '../route/extensions';
import type { RouteRecord } from '../route/route-record';
import type { RecordCheck } from '../route/extensions';
import { readShape, type ValueShape } from '../schema';

// What each input argument is called in a Refusal. Only these are read by their field names.
const INPUTS: Readonly<Record<string, string>> = {
  body: '@Body',
  form: '@Form',
  queryClass: '@Query()',
};

/**
 * An input type (`@Body`, `@Form`, `@Query()`) is read by its own field names, so neither it nor
 * any class it holds (nested, in a list, or as a union variant) may carry `renameAll` or `rename`.
 * A `tag` is fine (it names a value), and so are spelled enums and union variant names: those are
 * values, not field names. A union or spelled enum in a class that only class-validator can read is
 * refused too: that path cannot read them.
 */
const refuseRenamedInputs: RecordCheck = (record: RouteRecord, _services, problems) => {
  record.args.forEach((a, i) => {
    const where = INPUTS[a.kind];
    if (where === undefined || !('type' in a) || typeof a.type !== 'function') return;
    const found = problemIn(a.type, '', new Set());
    if (found === null) return;
    const at = found.path === '' ? '' : ` holds ${found.cls.name} (at ${found.path}), which`;
    problems.push(`${record.label}: parameter ${i}: ${where} ${a.type.name}${at} ${found.why}`);
  });
};

interface Found {
  readonly cls: Function;
  readonly path: string;
  readonly why: string;
}

const RENAMES =
  'renames its fields with @Json renameAll/rename; an input type is read by its own field names';

function problemIn(cls: Function, path: string, seen: Set<Function>): Found | null {
  if (seen.has(cls)) return null;
  seen.add(cls);
  const union = unionOf(cls);
  if (union !== null) {
    for (const v of union.variants) {
      const found = v.type === null ? null : problemIn(v.type, path, seen);
      if (found !== null) return found;
    }
    return null;
  }
  if (classSpelling(cls)?.renames === true) return { cls, path, why: RENAMES };
  const shape = readShape(cls);
  for (const p of shape.properties) {
    // A class read through class-transformer + class-validator (see fallback-reader.ts) would
    // construct the union itself: refused here rather than failing on every request.
    if (shape.fallback !== null && spelledValue(p.value)) {
      return {
        cls,
        path,
        why: `is read through class-validator (${shape.fallback}), which cannot read the union or spelled enum in ${p.name}`,
      };
    }
    const found = problemInValue(p.value, `${path}.${p.name}`, seen);
    if (found !== null) return found;
  }
  return null;
}

function problemInValue(v: ValueShape, path: string, seen: Set<Function>): Found | null {
  if (v.items !== undefined) return problemInValue(v.items, `${path}[]`, seen);
  return v.ref === undefined ? null : problemIn(v.ref, path, seen);
}

function spelledValue(v: ValueShape): boolean {
  if (v.items !== undefined && spelledValue(v.items)) return true;
  if (unionOf(v.ref) !== null) return true;
  return v.constraints.some(
    (c) =>
      c.check === 'enum' && c.decorator === IS_ENUM && enumSpelling(c.constraints?.[0]) !== null,
  );
}

/** The JSON spelling marker's checks; writing and reading live in the encoder and the reader. */
export const jsonSpelling: Capability = { checks: [refuseRenamedInputs] };
