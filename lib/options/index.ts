/**
 * The checks of fw's options: one helper per kind of value (a positive number, a whole number in
 * a range, true or false, one of a few names), each naming the owner, the option and what was
 * given, and throwing its module's own error. lib/http, lib/cache and lib/fetch all use it; it
 * imports nothing.
 */
export {
  checkBoolean,
  checkNumber,
  checkOneOf,
  checkPositive,
  checkWhole,
  noteRefusal,
  type OptionOwner,
  type NumberRange,
} from './check-option';
