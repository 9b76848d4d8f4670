// Type-level Refusals of fw: checked by `tsc --noEmit` in `npm test`, never run.
import { Redirect, headers } from 'fw-http';

// REF-19 a redirect status outside 301, 302, 303, 307, 308 is a type error
// @ts-expect-error 305 is not a redirect status
Redirect(305);
// @ts-expect-error 200 is not a redirect status
Redirect(200);
Redirect(301);
Redirect(308);

const h = { name: 'x', value: 'y' };
// REF-21 headers.of given a literal list of 9 or more entries is a type error
// @ts-expect-error nine headers
headers.of([h, h, h, h, h, h, h, h, h]);
// LIMITS-07 eight is fine
headers.of([h, h, h, h, h, h, h, h]);
// a list built at run time is checked when built (OPEN-51)
headers.of(Array.from({ length: 2 }, () => h));

import type { Ctx } from 'fw-http';
declare const c: Ctx;
// a stream with a declared length must say it: streamWith without a length is a type error
// @ts-expect-error length is required
c.streamWith(200, 'text/plain', {});
c.streamWith(200, 'text/plain', { length: 3 });
