/**
 * The Standard Schema v1 interface (standardschema.dev), as fw reads it: any library's schema (zod 4,
 * valibot, arktype) validates a body through `~standard.validate`, and documents itself through
 * `~standard.jsonSchema` (Standard JSON Schema) where the library offers it (issue 24 §5).
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      input(options: { target: string }): Record<string, unknown>;
    };
  };
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardIssue[] };

export interface StandardIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** The value a Standard Schema gives: `@Body(NewOrder) o: Infer<typeof NewOrder>`. */
export type Infer<S> = S extends StandardSchema<unknown, infer O> ? O : never;

export function isStandardSchema(x: unknown): x is StandardSchema {
  const s = (x as { '~standard'?: { version?: unknown; validate?: unknown } } | null)?.[
    '~standard'
  ];
  return (
    (typeof x === 'object' || typeof x === 'function') &&
    x !== null &&
    s?.version === 1 &&
    typeof s.validate === 'function'
  );
}

/** `body.items[2].qty: message`: the first issue, its path spelled as fw spells a class's. */
export function firstIssue(root: string, issues: readonly StandardIssue[]): string {
  const issue = issues[0];
  if (issue === undefined) return `${root}: refused`;
  let at = root;
  for (const p of issue.path ?? []) {
    const key = typeof p === 'object' && p !== null && 'key' in p ? p.key : p;
    at += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  }
  return `${at}: ${issue.message}`;
}
