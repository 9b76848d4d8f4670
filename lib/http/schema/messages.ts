import { ARRAY_NOT_EMPTY } from '../../json/validator-names';
import type { ValidationArguments } from 'class-validator';
import type { Constraint, CustomMessage, ValueKind } from './read-shape';

// Every refusal this folder words, in one place. The wording follows class-validator's
// defaults without the leading property name, because the reader prefixes the field path
// (`body.qty: must not be greater than 100`), so a 400 names what failed and why.

export const REQUIRED = 'is required';
export const NOT_AN_OBJECT_AT_TOP = 'must be a JSON object';
export const SINGLE_VALUE = 'must be a single value';

export const KIND_WHY: Record<ValueKind, string> = {
  string: 'must be a string',
  number: 'must be a number',
  integer: 'must be an integer',
  boolean: 'must be a boolean',
  array: 'must be an array',
  object: 'must be an object',
  enum: 'must be one of the allowed values',
  any: '',
};

/** A value nested deeper than a reader follows. */
export const tooDeepWhy = (maxDepth: number): string => `nested deeper than ${maxDepth}`;
/** An externally tagged union's value that is not one key naming a variant. */
export const oneVariantWhy = (names: readonly string[]): string =>
  `must be an object with one key naming the variant (${names.join(', ')})`;
/** A spelled enum name or a union's tag that names no member. */
export const oneOfWhy = (names: readonly string[]): string =>
  `must be one of the following values: ${names.join(', ')}`;
/** A class marked `@Json({ tag })` read without its own name under the tag. */
export const classTagWhy = (name: string): string => `must be ${JSON.stringify(name)}`;

export function constraintWhy(c: Constraint): string {
  switch (c.check) {
    case 'minLength':
      return `must be longer than or equal to ${c.value} characters`;
    case 'maxLength':
      return `must be shorter than or equal to ${c.value} characters`;
    case 'minimum':
      return `must not be less than ${c.value}`;
    case 'maximum':
      return `must not be greater than ${c.value}`;
    case 'exclusiveMinimum':
      return c.value === 0 ? 'must be a positive number' : `must be greater than ${c.value}`;
    case 'exclusiveMaximum':
      return c.value === 0 ? 'must be a negative number' : `must be less than ${c.value}`;
    case 'maxDecimalPlaces':
      return `must have at most ${c.value} decimal places`;
    case 'pattern':
      return `must match ${String(c.value)} regular expression`;
    case 'format':
      return c.value === 'email'
        ? 'must be an email'
        : c.value === 'uuid'
          ? 'must be a UUID'
          : 'must be a valid ISO 8601 date string';
    case 'enum':
      return `must be one of the following values: ${c.values.map(String).join(', ')}`;
    case 'minItems':
      return c.decorator === ARRAY_NOT_EMPTY
        ? 'should not be empty'
        : `must contain at least ${c.value} elements`;
    case 'maxItems':
      return `must contain no more than ${c.value} elements`;
    case 'notEmpty':
      return 'should not be empty';
    case 'defined':
      return 'should not be null or undefined';
  }
}

/**
 * A decorator's own `message`, with class-validator's tokens replaced, and with the leading
 * property name dropped so that it reads like the default wording after the field path.
 */
export function customWhy(message: CustomMessage, args: ValidationArguments): string {
  let text = typeof message === 'function' ? message(args) : message;
  if (typeof text !== 'string') return String(text);
  const cs = args.constraints;
  if (Array.isArray(cs)) {
    for (let i = 0; i < cs.length; i++) {
      const c: unknown = cs[i];
      text = text.split(`$constraint${i + 1}`).join(Array.isArray(c) ? c.join(', ') : String(c));
    }
  }
  const v: unknown = args.value;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
    text = text.split('$value').join(String(v));
  text = text.split('$property').join(args.property).split('$target').join(args.targetName);
  return stripProperty(text, args.property);
}

export function stripProperty(text: string, property: string): string {
  return text.startsWith(property + ' ') ? text.slice(property.length + 1) : text;
}

/** `.sku` for plain names, `["odd key"]` otherwise, so the path reads like JavaScript. */
export function pathPart(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? '.' + name : '[' + JSON.stringify(name) + ']';
}
