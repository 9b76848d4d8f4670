/**
 * Who checks an option and how it refuses one: `where` names the owner in the message
 * (`RedisStore`, `Space "orders"`, `GET /orders (Orders.create): @Idempotent`); `refuse` makes the
 * module's own error from the message (a `TypeError` when absent).
 *
 * @example
 * const store: OptionOwner = { where: 'RedisStore', refuse: (m) => new CacheError('InvalidArgument', m) };
 * const ms = checkPositive(store, 'commandTimeoutMs', options.commandTimeoutMs ?? 1000, { unit: 'ms' });
 */
export interface OptionOwner {
  readonly where: string;
  readonly refuse?: (message: string) => Error;
}

/**
 * The numbers an option takes: from `min`, above `above`, to `max`, below `below` (each bound
 * optional); `unit` is said in the message (`ms`, `bytes`), and `belowName` names what `below` is
 * (`commandTimeoutMs`).
 */
export interface NumberRange {
  readonly min?: number | undefined;
  readonly above?: number | undefined;
  readonly max?: number | undefined;
  readonly below?: number | undefined;
  readonly belowName?: string | undefined;
  readonly unit?: string | undefined;
}

/**
 * A finite number above 0, at most `range.max` when given.
 *
 * @example checkPositive({ where: 'Space "orders"' }, 'ttlSeconds', 0) // throws: Space "orders": ttlSeconds must be a positive number, got 0
 */
export function checkPositive(
  owner: OptionOwner,
  name: string,
  value: unknown,
  range: Pick<NumberRange, 'max' | 'unit'> = {},
): number {
  const { max, unit } = range;
  if (typeof value === 'number' && Number.isFinite(value) && within(value, { above: 0, max }))
    return value;
  const of = unit === undefined ? '' : ` of ${unit}`;
  const most = max === undefined ? '' : `, at most ${max}`;
  throw refusal(owner, name, value, `a positive number${of}${most}`);
}

/**
 * A whole number (a safe integer) within `range`.
 *
 * @example checkWhole({ where: 'RedisStore' }, 'maxBatch', 0, { min: 1 }) // throws: RedisStore: maxBatch must be a whole number from 1, got 0
 */
export function checkWhole(
  owner: OptionOwner,
  name: string,
  value: unknown,
  range: NumberRange,
): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && within(value, range))
    return value;
  throw refusal(owner, name, value, `a whole number${said(range)}`);
}

/**
 * A finite number within `range`.
 *
 * @example checkNumber({ where: 'Space "orders"' }, 'leaseMarginMs', 9, { min: 0, below: 5, belowName: 'leaseMs' })
 */
export function checkNumber(
  owner: OptionOwner,
  name: string,
  value: unknown,
  range: NumberRange,
): number {
  if (typeof value === 'number' && Number.isFinite(value) && within(value, range)) return value;
  throw refusal(owner, name, value, `a number${said(range)}`);
}

/** `true` or `false`, nothing else. */
export function checkBoolean(owner: OptionOwner, name: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  throw refusal(owner, name, value, 'true or false');
}

/** One of the names given. */
export function checkOneOf<T extends string>(
  owner: OptionOwner,
  name: string,
  value: unknown,
  names: readonly T[],
): T {
  if (names.includes(value as T)) return value as T;
  const listed = names.map((n) => `'${n}'`);
  const kind = listed.length === 2 ? `${listed[0]} or ${listed[1]}` : `one of ${listed.join(', ')}`;
  throw refusal(owner, name, value, kind);
}

function within(v: number, r: NumberRange): boolean {
  return (
    (r.min === undefined || v >= r.min) &&
    (r.above === undefined || v > r.above) &&
    (r.max === undefined || v <= r.max) &&
    (r.below === undefined || v < r.below)
  );
}

/** The range in words: ` of ms from 1 to less than commandTimeoutMs (1000)`. */
function said(r: NumberRange): string {
  let s = r.unit === undefined ? '' : ` of ${r.unit}`;
  if (r.min !== undefined) s += ` from ${r.min}`;
  else if (r.above !== undefined) s += ` above ${r.above}`;
  const upTo = r.min !== undefined || r.above !== undefined ? ' to' : ' up to';
  if (r.max !== undefined) s += `${upTo} ${r.max}`;
  if (r.below !== undefined)
    s += `${upTo} less than ${r.belowName === undefined ? r.below : `${r.belowName} (${r.below})`}`;
  return s;
}

function refusal(owner: OptionOwner, name: string, value: unknown, kind: string): Error {
  const message = `${owner.where === '' ? '' : `${owner.where}: `}${name} must be ${kind}, got ${given(value)}`;
  return owner.refuse === undefined ? new TypeError(message) : owner.refuse(message);
}

/** What was given, for a message: a string quoted, anything else as its JSON or its type. */
function given(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v !== 'object' || v === null) return String(v);
  try {
    return JSON.stringify(v) ?? typeof v;
  } catch {
    return typeof v;
  }
}

/**
 * Runs one check and notes its refusal in `problems` rather than throwing it, where every problem
 * of a route is told at once.
 *
 * @example noteRefusal(problems, () => checkBoolean(owner, 'atomic', mark.atomic));
 */
export function noteRefusal(problems: string[], check: () => unknown): void {
  try {
    check();
  } catch (e) {
    problems.push((e as Error).message);
  }
}
