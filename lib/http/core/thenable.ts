/** Whether `v` is a promise or any object with a `then` method (what `await` waits for). */
export function isThenable<T>(v: unknown): v is PromiseLike<T> {
  return (
    typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function'
  );
}
