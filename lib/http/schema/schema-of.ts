import { readShape } from './read-shape';
import type { ValueShape } from './read-shape';

/** A JSON Schema (2020-12, the OpenAPI 3.1 dialect) as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

// Which class got which component name, per components map: the map is the document being
// built, so names are unique within it and handed out in the order classes are first met.
const names = new WeakMap<Map<string, object>, Map<Function, string>>();

/**
 * Describes a class as `components.schemas.<Name>` and returns the reference to it. Nested
 * classes are added too; a second class with a name already taken becomes `<Name>_2`.
 *
 * @example
 * const components = new Map<string, object>();
 * schemaOf(CreateOrder, components); // { $ref: '#/components/schemas/CreateOrder' }
 * components.get('CreateOrder');     // { type: 'object', properties: { … }, required: ['sku', 'qty'] }
 */
export function schemaOf(cls: Function, components: Map<string, object>): { $ref: string } {
  let owned = names.get(components);
  if (owned === undefined) {
    owned = new Map();
    names.set(components, owned);
  }
  let name = owned.get(cls);
  if (name === undefined) {
    const base = cls.name === '' ? 'Anonymous' : cls.name;
    name = base;
    for (let i = 2; components.has(name); i++) name = `${base}_${i}`;
    owned.set(cls, name);
    // Reserved before the properties are described, so a class that refers to itself ends.
    components.set(name, {});
    components.set(name, objectSchema(cls, components));
  }
  return { $ref: `#/components/schemas/${name}` };
}

function objectSchema(cls: Function, components: Map<string, object>): JsonSchema {
  const shape = readShape(cls);
  const properties: JsonSchema = {};
  const required: string[] = [];
  for (const p of shape.properties) {
    let s = valueSchema(p.value, components);
    // @IsOptional lets null through as well as a missing value, so the schema says so.
    if (p.optional) s = orNull(s);
    if (p.hasDefault && isJsonScalar(p.default)) s = { ...s, default: p.default };
    Object.defineProperty(properties, p.name, { value: s, enumerable: true, writable: true, configurable: true });
    if (p.required) required.push(p.name);
  }
  const schema: JsonSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  return schema;
}

/**
 * The JSON Schema of one property's value, as read by `readShape` (for example to describe a
 * query class's properties as separate parameters). Nested classes go to `components`.
 *
 * @example
 * for (const p of readShape(Search).properties) {
 *   parameters.push({ in: 'query', name: p.name, required: p.required, schema: valueSchema(p.value, components) });
 * }
 */
export function valueSchema(value: ValueShape, components: Map<string, object>): JsonSchema {
  let s: JsonSchema;
  switch (value.kind) {
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
      s = { type: value.kind };
      break;
    case 'array': {
      s = { type: 'array' };
      const items = value.items === undefined ? {} : valueSchema(value.items, components);
      if (Object.keys(items).length > 0) s.items = items;
      break;
    }
    case 'object':
      if (value.ref !== undefined) return withConstraints(schemaOf(value.ref, components), value);
      s = { type: 'object' };
      break;
    case 'enum':
    case 'any':
      s = {};
      break;
  }
  return withConstraints(s, value);
}

function withConstraints(s: JsonSchema, value: ValueShape): JsonSchema {
  for (const c of value.constraints) {
    switch (c.check) {
      case 'minLength':
      case 'minimum':
      case 'exclusiveMinimum':
      case 'minItems':
        s[c.check] = typeof s[c.check] === 'number' ? Math.max(s[c.check] as number, c.value) : c.value;
        break;
      case 'maxLength':
      case 'maximum':
      case 'exclusiveMaximum':
      case 'maxItems':
        s[c.check] = typeof s[c.check] === 'number' ? Math.min(s[c.check] as number, c.value) : c.value;
        break;
      case 'pattern':
        // JSON Schema patterns have no flags: a pattern that needs them is left out, so the
        // document is looser than the reader, never stricter.
        if (s.pattern === undefined && (c.value.flags === '' || c.value.flags === 'u')) s.pattern = c.value.source;
        break;
      case 'format':
        s.format = c.value;
        break;
      case 'enum': {
        const prior = s.enum as unknown[] | undefined;
        s.enum = prior === undefined ? [...c.values] : prior.filter((x) => c.values.includes(x));
        if (s.type === undefined) {
          const t = enumType(c.values);
          if (t !== null) s.type = t;
        }
        break;
      }
      case 'notEmpty':
        if (s.type === 'string' && !(typeof s.minLength === 'number' && s.minLength >= 1)) s.minLength = 1;
        break;
      case 'maxDecimalPlaces':
      case 'defined':
        // Not expressible without float trouble (`multipleOf: 0.01`) / already `required`.
        break;
    }
  }
  return s;
}

function enumType(values: readonly unknown[]): string | null {
  if (values.length === 0) return null;
  if (values.every((v) => typeof v === 'string')) return 'string';
  if (values.every((v) => typeof v === 'number' && Number.isInteger(v))) return 'integer';
  if (values.every((v) => typeof v === 'number')) return 'number';
  if (values.every((v) => typeof v === 'boolean')) return 'boolean';
  return null;
}

function orNull(s: JsonSchema): JsonSchema {
  if (s.$ref !== undefined) return { anyOf: [s, { type: 'null' }] };
  const out: JsonSchema = { ...s };
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  return out;
}

function isJsonScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

/**
 * The schema of a path or header parameter from its `design:type`.
 *
 * @example
 * scalarSchema(Number); // { type: 'number' }
 */
export function scalarSchema(type: Function): { type: 'string' | 'number' | 'boolean' } | JsonSchema {
  if (type === String) return { type: 'string' };
  if (type === Number) return { type: 'number' };
  if (type === Boolean) return { type: 'boolean' };
  return {};
}
