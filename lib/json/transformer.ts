import type { TransformationType } from 'class-transformer';

// class-transformer (34 modules) is optional at run time: fw loads it only to read a value the
// compiled readers cannot (the fallback reader, `unspell` of a class that reaches no marker). Its
// decorators are read at scan time from its storage, which it does not export from its index;
// its package has no "exports" map, so the deep path is stable for 0.5.x.

/** What fw reads of class-transformer's decorator storage. */
export interface TransformerStorage {
  findTypeMetadata(
    target: Function,
    property: string,
  ): { typeFunction: (o?: unknown) => Function; options?: { discriminator?: unknown } } | undefined;
  findTransformMetadatas(target: Function, property: string, type: TransformationType): unknown[];
  getStrategy(target: Function): string;
  getExposedMetadatas(
    target: Function,
  ): { propertyName: string; options?: Record<string, unknown> }[];
  getExcludedMetadatas(target: Function): unknown[];
}

/** `TransformationType.PLAIN_TO_CLASS`, without loading the package for its enum. */
export const PLAIN_TO_CLASS = 0 as TransformationType.PLAIN_TO_CLASS;

// What the storage answers for a class no class-transformer decorator touched.
const NOTHING_RECORDED: TransformerStorage = Object.freeze({
  findTypeMetadata: () => undefined,
  findTransformMetadatas: () => [],
  getStrategy: () => 'none',
  getExposedMetadatas: () => [],
  getExcludedMetadatas: () => [],
});

let storagePath: string | null = null;
let storage: TransformerStorage | null = null;

/**
 * class-transformer's decorator storage once the program has loaded class-transformer, and until
 * then a storage with nothing recorded. That is exact, not a guess: `@Type`, `@Transform`,
 * `@Expose` and `@Exclude` record into this very module when the decorated class is defined, so
 * a class that carries one exists only after the module is in require.cache. Asked again at each
 * scan, so a program that loads class-transformer after fw is seen from then on. (A second copy
 * of class-transformer elsewhere in node_modules records into its own storage, which fw never
 * read, before or after this deferral.)
 */
export function transformerStorage(): TransformerStorage {
  if (storage !== null) return storage;
  storagePath ??= require.resolve('class-transformer/cjs/storage');
  if (require.cache[storagePath] === undefined) return NOTHING_RECORDED;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- already loaded by the program (checked above)
  storage = (require(storagePath) as { defaultMetadataStorage: TransformerStorage })
    .defaultMetadataStorage;
  giveTypes();
  return storage;
}

// What fw's own classes would say with `@Type(() => T)` (a Page's items), held until
// class-transformer is loaded, by the program or by `toInstance`, so `plainToInstance` builds their
// nested instances as it would had they been decorated.
let heldTypes: [cls: Function, property: string, type: Function][] = [];

/** Gives `type` to class-transformer as `@Type(() => type)` on `cls`'s `property`, once it is loaded. */
export function declareType(cls: Function, property: string, type: Function): void {
  heldTypes.push([cls, property, type]);
  if (transformerStorage() !== NOTHING_RECORDED) giveTypes();
}

function giveTypes(): void {
  if (heldTypes.length === 0) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by now (its storage is)
  const { Type } = require('class-transformer') as {
    Type: (f: () => Function) => (target: object, key: string) => void;
  };
  for (const [cls, property, type] of heldTypes)
    Type(() => type)(cls.prototype as object, property);
  heldTypes = [];
}

type PlainToInstance = (cls: new () => object, plain: object) => object;
let plainToInstance: PlainToInstance | null = null;

/** class-transformer's `plainToInstance`, loading the package on first use. */
export function toInstance(cls: Function, plain: object): object {
  if (plainToInstance === null) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred until a value is read the slow way
    plainToInstance = (require('class-transformer') as { plainToInstance: PlainToInstance })
      .plainToInstance;
    transformerStorage();
  }
  return plainToInstance(cls as new () => object, plain);
}
