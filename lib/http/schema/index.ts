// Internal door of lib/http/schema: class-validator declarations read once into a shape, then
// compiled into a fast reader and into JSON Schema. Not part of the public `fw` surface.
export { readShape, unseenNested } from './read-shape';
export type {
  ClassShape,
  Constraint,
  CustomMessage,
  PropertyShape,
  ValueKind,
  ValueShape,
} from './read-shape';
export { MAX_DEPTH, compileReader } from './compile-reader';
export type { Read, ReaderOptions, ReadSource } from './compile-reader';
export { writtenFields, type WrittenField, type WrittenFields } from './written-fields';
export { inlineSchemaOf, schemaOf, scalarSchema, valueSchema } from './schema-of';
export type { JsonSchema } from './schema-of';
export { NOT_CONVERTED, convertQueryScalar } from './query-value';
export { MAX_PARAMS, TOO_MANY, declaredNames, firstParam, readParams } from './read-params';
export type { Params } from './read-params';
