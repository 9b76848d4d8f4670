import {
  ARRAY_MAX_SIZE,
  ARRAY_MIN_SIZE,
  ARRAY_NOT_EMPTY,
  IS_DATE_STRING,
  IS_DEFINED,
  IS_EMAIL,
  IS_ENUM,
  IS_IN,
  IS_ISO8601,
  IS_LENGTH,
  IS_NEGATIVE,
  IS_NOT_EMPTY,
  IS_NUMBER,
  IS_POSITIVE,
  IS_UUID,
  MATCHES,
  MAX,
  MAX_LENGTH,
  MIN,
  MIN_LENGTH,
} from '../../json/validator-names';
import type { ValidationArguments } from 'class-validator';
import type { ValidationRecord } from '../../json/validator';

/** A custom `message` given to a class-validator decorator. */
export type CustomMessage = string | ((args: ValidationArguments) => string);

/**
 * One compiled constraint. The reader checks them in source order; the JSON Schema builder
 * maps each to keywords. Both read this list and nothing else.
 */
export type Constraint = (
  | { check: 'minLength'; value: number }
  | { check: 'maxLength'; value: number }
  | { check: 'minimum'; value: number }
  | { check: 'maximum'; value: number }
  | { check: 'exclusiveMinimum'; value: number }
  | { check: 'exclusiveMaximum'; value: number }
  | { check: 'maxDecimalPlaces'; value: number }
  | { check: 'pattern'; value: RegExp }
  | { check: 'format'; value: 'email' | 'uuid' | 'date-time'; options: unknown }
  | { check: 'enum'; values: readonly unknown[] }
  | { check: 'minItems'; value: number }
  | { check: 'maxItems'; value: number }
  | { check: 'notEmpty' }
  | { check: 'defined' }
) & {
  /** The class-validator constraint it came from (`isIn`, `arrayNotEmpty`...). */
  decorator: string;
  message?: CustomMessage | undefined;
  /** The decorator's own arguments, for `$constraint1` in custom messages. */
  constraints?: readonly unknown[];
};

/** The constraints one class-validator decorator stands for (none for pure type checks). */
export function readConstraints(m: ValidationRecord): Constraint[] {
  const args: readonly unknown[] = m.constraints ?? [];
  if (m.name === IS_LENGTH) {
    // `@Length(min, max)` becomes two constraints that keep the decorator's own message.
    const out: Constraint[] = [];
    if (args[0] !== undefined && args[0] !== null)
      out.push({
        check: 'minLength',
        value: args[0] as number,
        decorator: IS_LENGTH,
        message: m.message,
        constraints: args,
      });
    if (args[1] !== undefined && args[1] !== null)
      out.push({
        check: 'maxLength',
        value: args[1] as number,
        decorator: IS_LENGTH,
        message: m.message,
        constraints: args,
      });
    return out;
  }
  const c = readConstraint(m, args);
  return c === null ? [] : [c];
}

function readConstraint(m: ValidationRecord, args: readonly unknown[]): Constraint | null {
  const base = { decorator: m.name!, message: m.message, constraints: args };
  switch (m.name) {
    case MIN_LENGTH:
      return { check: 'minLength', value: args[0] as number, ...base };
    case MAX_LENGTH:
      return { check: 'maxLength', value: args[0] as number, ...base };
    case MIN:
      return { check: 'minimum', value: args[0] as number, ...base };
    case MAX:
      return { check: 'maximum', value: args[0] as number, ...base };
    case IS_POSITIVE:
      return { check: 'exclusiveMinimum', value: 0, ...base };
    case IS_NEGATIVE:
      return { check: 'exclusiveMaximum', value: 0, ...base };
    case IS_NUMBER: {
      const places = (args[0] as { maxDecimalPlaces?: number } | undefined)?.maxDecimalPlaces;
      return places === undefined ? null : { check: 'maxDecimalPlaces', value: places, ...base };
    }
    case MATCHES: {
      const p = args[0];
      const re =
        p instanceof RegExp ? p : new RegExp(String(p), (args[1] as string | undefined) ?? '');
      // `test` on a /g or /y regex moves lastIndex between calls; keep a stateless copy.
      const value =
        re.global || re.sticky ? new RegExp(re.source, re.flags.replace(/[gy]/g, '')) : re;
      return { check: 'pattern', value, ...base };
    }
    case IS_EMAIL:
      return { check: 'format', value: 'email', options: args[0], ...base };
    case IS_UUID:
      return { check: 'format', value: 'uuid', options: args[0], ...base };
    case IS_ISO8601:
    case IS_DATE_STRING:
      return { check: 'format', value: 'date-time', options: args[0], ...base };
    case IS_IN:
      return { check: 'enum', values: Object.freeze([...(args[0] as unknown[])]), ...base };
    case IS_ENUM:
      // constraints[1] is the enum's values without the reverse-mapped names of numeric members.
      return { check: 'enum', values: Object.freeze([...(args[1] as unknown[])]), ...base };
    case ARRAY_MIN_SIZE:
      return { check: 'minItems', value: args[0] as number, ...base };
    case ARRAY_MAX_SIZE:
      return { check: 'maxItems', value: args[0] as number, ...base };
    case ARRAY_NOT_EMPTY:
      return { check: 'minItems', value: 1, ...base };
    case IS_NOT_EMPTY:
      return { check: 'notEmpty', ...base };
    case IS_DEFINED:
      return { check: 'defined', ...base };
    default:
      return null;
  }
}
