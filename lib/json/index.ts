/**
 * The JSON spelling marker (the seed's `fw_json`): `@Json` on classes, `jsonEnum` on enums,
 * `Union(...)` for tagged unions, and the writer and reader that honour them. This file is the
 * module's only door; `lib/http` and `lib/fetch` both use it, and it imports neither. `fw`
 * re-exports the public part.
 */
export {
  Json,
  jsonEnum,
  Union,
  UnitVariant,
  classSpelling,
  enumSpelling,
  unionOf,
  markersDeclared,
} from './marks';
export type {
  JsonOptions,
  JsonEnumOptions,
  Spelling,
  EnumSpelling,
  UnionSpelling,
  UnionType,
  VariantSpelling,
} from './marks';
export { RENAME_ALL, renameWith, words, type RenameAll } from './rename';
export { compileWriter, spell, type Spell } from './writer';
export { unspell, type Unspell } from './reader';
export { reachesMarker } from './fields';

// Declared fields only: what fw-http's declared writer reads of a class.
export { blank, declaredFields } from './fields';
export { transformerStorage } from './transformer';
