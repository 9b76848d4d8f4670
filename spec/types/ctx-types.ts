// Type-level checks of Ctx: checked by `tsc --noEmit` in `npm test`, never run.
import { headers, Versioned, type Ctx } from 'fw-http';

declare const c: Ctx;

// c.status is read-only: the framework sets it as the answer's head goes out
// @ts-expect-error status cannot be assigned
c.status = 200;
// @ts-expect-error nor counted up
c.status++;
const sent: number = c.status;
void sent;

// Versioned.unchanged takes the headers as unchangedWith does; the headers are optional
Versioned.unchanged(1);
Versioned.unchanged(1, headers.of([{ name: 'x-a', value: 'b' }]));
Versioned.unchangedWith(1, headers.of([{ name: 'x-a', value: 'b' }]));
// @ts-expect-error unchangedWith names its headers
Versioned.unchangedWith(1);
