import { Failure } from './errors';

/**
 * A form as it was read: the value when it fits its class, the field errors when it does not.
 * @example
 * @Post('/signup') signup(@Form(Signup) b: Bound<Signup>) {
 *   if (!b.ok) throw b.fail();   // 422 carrying the field errors
 *   return register(b.value!);
 * }
 */
export class Bound<T> {
  constructor(
    /** The form read into its class, or null when it does not fit. */
    readonly value: T | null,
    /** Field errors, each naming its field (`form.qty: must be an integer`). */
    readonly errors: readonly string[],
    /** The fields as sent. */
    readonly fields: Readonly<Record<string, string | string[]>>,
  ) {}

  get ok(): boolean {
    return this.errors.length === 0;
  }

  /** A 422 whose message carries the form's field errors. */
  fail(): Failure {
    return new Failure(422, this.errors.length ? this.errors.join('; ') : 'form refused');
  }
}
