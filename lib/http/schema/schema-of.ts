import { IS_ENUM } from '../../json/validator-names';
import { classSpelling, enumSpelling, unionOf, type UnionSpelling } from '../../json';
import type { PropertyShape, ValueShape } from './read-shape';
import { writtenFields } from './written-fields';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1 and 3.2) as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

// Which class (or union variant) got which component name, per components map: the map is the
// document being built, so names are unique within it and handed out in the order first met.
const names = new WeakMap<Map<string, object>, Map<object, string>>();

/**
 * Describes a class as `components.schemas.<Name>` and returns the reference to it. Nested
 * classes are added too; a second class with a name already taken becomes `<Name>_2`. Names are
 * spelled as on the wire (`@Json`), and a `Union(...)` is a `oneOf`, so
 * the document describes what is really sent.
 *
 * @example
 * const components = new Map<string, object>();
 * schemaOf(CreateOrder, components); // { $ref: '#/components/schemas/CreateOrder' }
 * components.get('CreateOrder');     // { type: 'object', properties: { … }, required: ['sku', 'qty'] }
 */
export function schemaOf(cls: Function, components: Map<string, object>): { $ref: string } {
  const union = unionOf(cls);
  return component(cls, cls.name, components, () =>
    union === null ? objectSchema(cls, components) : unionSchema(union, components),
  );
}

/**
 * A class's schema itself rather than a reference to it (nested classes are still components):
 * for a place that stands alone, such as an event's `contentSchema`, where a reader should not have
 * to resolve a reference to see the fields.
 */
export function inlineSchemaOf(cls: Function, components: Map<string, object>): JsonSchema {
  const union = unionOf(cls);
  return union === null ? objectSchema(cls, components) : unionSchema(union, components);
}

function component(
  key: object,
  wanted: string,
  components: Map<string, object>,
  describe: () => JsonSchema,
): { $ref: string } {
  let owned = names.get(components);
  if (owned === undefined) {
    owned = new Map();
    names.set(components, owned);
  }
  let name = owned.get(key);
  if (name === undefined) {
    const base = wanted === '' ? 'Anonymous' : wanted;
    name = base;
    for (let i = 2; components.has(name); i++) name = `${base}_${i}`;
    owned.set(key, name);
    // Reserved before the properties are described, so a class that refers to itself ends.
    components.set(name, {});
    components.set(name, describe());
  }
  return { $ref: `#/components/schemas/${name}` };
}

function objectSchema(cls: Function, components: Map<string, object>): JsonSchema {
  const mark = classSpelling(cls);
  const properties: JsonSchema = {};
  const required: string[] = [];
  if (mark?.tag != null) {
    properties[mark.tag] = { type: 'string', const: cls.name };
    required.push(mark.tag);
  }
  // Exactly the fields an answer of the class carries (the declared writer's rule), then those
  // only read from input.
  const fields = writtenFields(cls);
  const put = (name: string, s: JsonSchema): void => {
    // Property names as they are spelled on the wire, not as the class names them.
    Object.defineProperty(properties, mark === null ? name : mark.spell(name), {
      value: s,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  };
  for (const { name, property: p } of fields.written) {
    // A field no decorator declares is written as any JSON, and no input reads it.
    if (p === null) put(name, { readOnly: true });
    else {
      put(name, propertySchema(p, components));
      if (p.required) required.push(mark === null ? name : mark.spell(name));
    }
  }
  for (const p of fields.excluded) {
    put(p.name, { ...propertySchema(p, components), writeOnly: true });
    if (p.required) required.push(mark === null ? p.name : mark.spell(p.name));
  }
  const schema: JsonSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  return schema;
}

/** A declared property's schema: its value's, null allowed when `@IsOptional`, its default. */
function propertySchema(p: PropertyShape, components: Map<string, object>): JsonSchema {
  let s = valueSchema(p.value, components);
  // @IsOptional lets null through as well as a missing value, so the schema says so.
  if (p.optional) s = orNull(s);
  if (p.hasDefault && isJsonScalar(p.default)) s = { ...s, default: p.default };
  return s;
}

/**
 * A union is `oneOf` its variants. Externally tagged: each is an object with the one
 * key naming it. Internally tagged: each variant is a component of its own (`Shape.circle`, the
 * payload class's schema with the tag beside it) so that the `discriminator` can map to it.
 */
function unionSchema(u: UnionSpelling, components: Map<string, object>): JsonSchema {
  const tag = u.tag;
  if (tag === null) {
    return {
      oneOf: u.variants.map((v) => ({
        type: 'object',
        properties: {
          [v.name]:
            v.type === null ? { type: 'object', maxProperties: 0 } : schemaOf(v.type, components),
        },
        required: [v.name],
        additionalProperties: false,
      })),
    };
  }
  const mapping: Record<string, string> = {};
  const oneOf = u.variants.map((v) => {
    const tagged: JsonSchema = {
      type: 'object',
      properties: { [tag]: { type: 'string', const: v.name } },
      required: [tag],
    };
    const ref = component(
      v,
      `${u.name}.${v.key.replace(/[^A-Za-z0-9._-]/g, '_')}`,
      components,
      () => (v.type === null ? tagged : { allOf: [schemaOf(v.type, components), tagged] }),
    );
    mapping[v.name] = ref.$ref;
    return ref;
  });
  return { oneOf, discriminator: { propertyName: tag, mapping } };
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
        s[c.check] =
          typeof s[c.check] === 'number' ? Math.max(s[c.check] as number, c.value) : c.value;
        break;
      case 'maxLength':
      case 'maximum':
      case 'exclusiveMaximum':
      case 'maxItems':
        s[c.check] =
          typeof s[c.check] === 'number' ? Math.min(s[c.check] as number, c.value) : c.value;
        break;
      case 'pattern':
        // JSON Schema patterns have no flags: a pattern that needs them is left out, so the
        // document is looser than the reader, never stricter.
        if (s.pattern === undefined && (c.value.flags === '' || c.value.flags === 'u'))
          s.pattern = c.value.source;
        break;
      case 'format':
        // `@IsISO8601()` / `@IsDateString()` take a year alone, a date, a week or a date-time:
        // `format: date-time` would make a client refuse what the reader takes.
        if (c.value !== 'date-time') s.format = c.value;
        else if (s.pattern === undefined) s.pattern = iso8601Pattern(c.options);
        break;
      case 'enum': {
        // An enum marked with `jsonEnum` travels as its spelled member names.
        const spelled = c.decorator === IS_ENUM ? enumSpelling(c.constraints?.[0]) : null;
        const values = spelled === null ? c.values : spelled.names;
        const prior = s.enum as unknown[] | undefined;
        s.enum = prior === undefined ? [...values] : prior.filter((x) => values.includes(x));
        if (s.type === undefined || spelled !== null) {
          const t = enumType(values);
          if (t !== null) s.type = t;
        }
        break;
      }
      case 'notEmpty':
        if (s.type === 'string' && !(typeof s.minLength === 'number' && s.minLength >= 1))
          s.minLength = 1;
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
  return (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    (typeof v === 'number' && Number.isFinite(v))
  );
}

/**
 * The schema of a path or header parameter from its `design:type`.
 *
 * @example
 * scalarSchema(Number); // { type: 'number' }
 */
export function scalarSchema(
  type: Function,
): { type: 'string' | 'number' | 'boolean' } | JsonSchema {
  if (type === String) return { type: 'string' };
  if (type === Number) return { type: 'number' };
  if (type === Boolean) return { type: 'boolean' };
  return {};
}

/**
 * What class-validator's `isISO8601` accepts (validator.js), as a JSON Schema pattern that any
 * regular-expression dialect reads: no look-around and no back-reference, so it takes a little
 * more than the reader (`2024-0501`, mixed separators), never less. `strictSeparator` allows only
 * `T` between date and time.
 */
function iso8601Pattern(options: unknown): string {
  const strict = (options as { strictSeparator?: unknown } | undefined)?.strictSeparator === true;
  const time =
    '((([01]\\d|2[0-3])(:?[0-5]\\d)?|24:?00)([.,]\\d+)?)?(:?[0-5]\\d([.,]\\d+)?)?' +
    '([zZ]|[+-]([01]\\d|2[0-3]):?([0-5]\\d)?)?';
  const date =
    '(0[1-9]|1[0-2])(-?([12]\\d|0[1-9]|3[01]))?|W([0-4]\\d|5[0-3])(-?[1-7])?' +
    '|(00[1-9]|0[1-9]\\d|[12]\\d{2}|3([0-5]\\d|6[1-6]))';
  return `^[+-]?\\d{4}(-?(${date})(${strict ? 'T' : '[T\\s]'}${time})?)?$`;
}
