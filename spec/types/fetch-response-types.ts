// Type-level checks of fw/fetch's Response and Head: type-checked by `npx tsc -p tsconfig.json --noEmit`,
// never run. Each `@ts-expect-error` line must be a type error; each plain line must compile.
import type { ResponseHead, FetchResponse } from 'fw-http/fetch';

// `ok` is a read-only boolean property, as in `fetch`, so the usual guard works.
export function guard(res: FetchResponse, head: ResponseHead): boolean {
  if (!res.ok) throw new Error(`upstream answered ${res.status}`);
  return head.ok;
}

export function okIsNotAMethod(res: FetchResponse, head: ResponseHead): void {
  // @ts-expect-error ok is not a method: res.ok() no longer compiles
  void res.ok();
  // @ts-expect-error nor head.ok()
  void head.ok();
  // @ts-expect-error ok is read-only
  res.ok = true;
}
