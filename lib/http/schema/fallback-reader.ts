import type { ValidationError } from 'class-validator';
import { toInstance } from '../../json/transformer';
import { classValidator } from '../../json/validator';
import { KIND_WHY, REQUIRED, SINGLE_VALUE, pathPart, stripProperty } from './messages';
import { NOT_CONVERTED, convertQueryScalar } from './query-value';
import { isKindConstraint, readShape } from './read-shape';
import type { ClassShape, ValueShape } from './read-shape';

export type FallbackResult = { ok: true; value: object } | { ok: false; path: string; why: string };

// A class whose declaration the compiler cannot read in full (a custom `@Validate`, a
// `@ValidateIf`, groups, an unknown decorator, a class-transformer `@Transform`...) is read the
// slow, always-right way: class-transformer builds the instance and class-validator checks it.
// Only the query conversion, the first-error wording and the "required unless @IsOptional"
// rule are ours, so both paths refuse the same inputs with the same messages.
export function readWithClassValidator(
  shape: ClassShape,
  input: object,
  source: 'body' | 'query',
): FallbackResult {
  let plain: object = input;
  if (source === 'query') {
    const converted: Record<string, unknown> = {};
    const record = input as Record<string, unknown>;
    for (const p of shape.properties) {
      if (!Object.prototype.hasOwnProperty.call(record, p.name)) continue;
      const v = convertQuery(p.value, record[p.name]);
      if (v instanceof Refused) return { ok: false, path: pathPart(p.name) + v.path, why: v.why };
      converted[p.name] = v;
    }
    plain = converted;
  }
  const instance = toInstance(shape.target, plain);
  const errors = classValidator().validateSync(instance, {
    whitelist: true,
    forbidUnknownValues: false,
  });
  if (errors.length > 0) return firstError(errors[0]!);
  const missing = findMissing(shape, instance as Record<string, unknown>);
  return missing === null
    ? { ok: true, value: instance }
    : { ok: false, path: missing, why: REQUIRED };
}

class Refused {
  constructor(
    readonly path: string,
    readonly why: string,
  ) {}
}

function convertQuery(value: ValueShape, raw: unknown): unknown {
  if (value.kind === 'array') {
    const list = Array.isArray(raw) ? raw : [raw];
    const items = value.items;
    if (items === undefined) return list;
    const out: unknown[] = [];
    for (let i = 0; i < list.length; i++) {
      const v = convertQuery(items, list[i]);
      if (v instanceof Refused) return new Refused(`[${i}]` + v.path, v.why);
      out.push(v);
    }
    return out;
  }
  if (Array.isArray(raw)) {
    if (raw.length !== 1) return new Refused('', SINGLE_VALUE);
    raw = raw[0];
  }
  if (typeof raw !== 'string') return raw;
  const members = value.constraints.find((c) => c.check === 'enum');
  const v = convertQueryScalar(
    value.kind,
    raw,
    members !== undefined && members.check === 'enum' ? members.values : null,
  );
  return v === NOT_CONVERTED ? new Refused('', KIND_WHY[value.kind]) : v;
}

function firstError(top: ValidationError): FallbackResult {
  let err = top;
  let path = pathPart(err.property);
  while (
    (err.constraints === undefined || Object.keys(err.constraints).length === 0) &&
    err.children !== undefined &&
    err.children.length > 0
  ) {
    const parentValue: unknown = err.value;
    err = err.children[0]!;
    path += Array.isArray(parentValue) ? `[${err.property}]` : pathPart(err.property);
  }
  if (err.value === undefined && isRequired(err.target, err.property))
    return { ok: false, path, why: REQUIRED };
  // class-validator lists a property's failures bottom decorator first; the compiled reader
  // reports the type check first, then the constraints top to bottom. Pick the same one.
  const keys = err.constraints === undefined ? [] : Object.keys(err.constraints).reverse();
  const key = keys.find(isKindConstraint) ?? keys[0];
  return {
    ok: false,
    path,
    why: key === undefined ? 'is invalid' : stripProperty(err.constraints![key]!, err.property),
  };
}

function isRequired(owner: unknown, property: string): boolean {
  if (owner === null || typeof owner !== 'object' || Array.isArray(owner)) return false;
  const p = readShape((owner as object).constructor).properties.find((q) => q.name === property);
  return p !== undefined && p.required;
}

// class-validator lets a missing value through when a property only has @Allow or
// @ValidateNested; our rule is simpler (required unless @IsOptional), so check it after.
function findMissing(shape: ClassShape, instance: Record<string, unknown>): string | null {
  for (const p of shape.properties) {
    const v = instance[p.name];
    if (v === undefined) {
      if (p.required) return pathPart(p.name);
      continue;
    }
    const inner = nestedMissing(p.value, v);
    if (inner !== null) return pathPart(p.name) + inner;
  }
  return null;
}

function nestedMissing(value: ValueShape, v: unknown): string | null {
  if (value.kind === 'object' && value.ref !== undefined && v !== null && typeof v === 'object') {
    return findMissing(readShape(value.ref), v as Record<string, unknown>);
  }
  if (value.kind === 'array' && value.items !== undefined && Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const inner = nestedMissing(value.items, v[i]);
      if (inner !== null) return `[${i}]` + inner;
    }
  }
  return null;
}
