import type * as ClassValidator from 'class-validator';

// The names class-validator records its decorators under, as its own constants spell them. fw
// compares records against these without loading class-validator (321 modules with validator.js
// and libphonenumber-js): an app that declares no class-validator class never loads it. The types
// are class-validator's, so a rename there fails the type check here.

export const ARRAY_MAX_SIZE: typeof ClassValidator.ARRAY_MAX_SIZE = 'arrayMaxSize';
export const ARRAY_MIN_SIZE: typeof ClassValidator.ARRAY_MIN_SIZE = 'arrayMinSize';
export const ARRAY_NOT_EMPTY: typeof ClassValidator.ARRAY_NOT_EMPTY = 'arrayNotEmpty';
export const IS_ARRAY: typeof ClassValidator.IS_ARRAY = 'isArray';
export const IS_BOOLEAN: typeof ClassValidator.IS_BOOLEAN = 'isBoolean';
export const IS_DATE_STRING: typeof ClassValidator.IS_DATE_STRING = 'isDateString';
export const IS_DEFINED: typeof ClassValidator.IS_DEFINED = 'isDefined';
export const IS_EMAIL: typeof ClassValidator.IS_EMAIL = 'isEmail';
export const IS_ENUM: typeof ClassValidator.IS_ENUM = 'isEnum';
export const IS_IN: typeof ClassValidator.IS_IN = 'isIn';
export const IS_INT: typeof ClassValidator.IS_INT = 'isInt';
export const IS_ISO8601: typeof ClassValidator.IS_ISO8601 = 'isIso8601';
export const IS_LENGTH: typeof ClassValidator.IS_LENGTH = 'isLength';
export const IS_NEGATIVE: typeof ClassValidator.IS_NEGATIVE = 'isNegative';
export const IS_NOT_EMPTY: typeof ClassValidator.IS_NOT_EMPTY = 'isNotEmpty';
export const IS_NUMBER: typeof ClassValidator.IS_NUMBER = 'isNumber';
export const IS_OBJECT: typeof ClassValidator.IS_OBJECT = 'isObject';
export const IS_OPTIONAL: typeof ClassValidator.IS_OPTIONAL = 'isOptional';
export const IS_POSITIVE: typeof ClassValidator.IS_POSITIVE = 'isPositive';
export const IS_STRING: typeof ClassValidator.IS_STRING = 'isString';
export const IS_UUID: typeof ClassValidator.IS_UUID = 'isUuid';
export const MATCHES: typeof ClassValidator.MATCHES = 'matches';
export const MAX: typeof ClassValidator.MAX = 'max';
export const MAX_LENGTH: typeof ClassValidator.MAX_LENGTH = 'maxLength';
export const MIN: typeof ClassValidator.MIN = 'min';
export const MIN_LENGTH: typeof ClassValidator.MIN_LENGTH = 'minLength';

/**
 * class-validator's `ValidationTypes`: the kind of each record. Its own are `string`-typed static
 * fields, so spec/json/validator-names.spec.ts checks these against the loaded package.
 */
export const ValidationTypes = Object.freeze({
  CUSTOM_VALIDATION: 'customValidation',
  NESTED_VALIDATION: 'nestedValidation',
  PROMISE_VALIDATION: 'promiseValidation',
  CONDITIONAL_VALIDATION: 'conditionalValidation',
  WHITELIST: 'whitelistValidation',
  IS_DEFINED: 'isDefined',
});
