// ANS-50 (type) `@Returns(contract)` holds the handler to the value the contract answers: checked by
// `tsc --noEmit` in `npm test`, never run. One case per line of the answer-types table, then the accepted forms.
import {
  Bytes,
  EventStream,
  Optional,
  Redirect,
  Reply,
  Returns,
  Status,
  Union,
  Versioned,
  headers,
  reply,
  type AnswerOf,
  type Ctx,
  type ReplyOf,
  type ReplyValue,
  type TooManyHeaders,
} from 'fw-http';
import { Dir, FileBody } from 'fw-http/files';

class Booking {
  constructor(
    readonly id: number,
    readonly guest: string,
  ) {}
}
/** A class with a `status` field of its own: a Reply route returning it bare is the wrapper's mistake. */
class Ticket {
  constructor(
    readonly id: number,
    readonly status: number,
  ) {}
}
class Conflict {
  readonly reason = 'taken';
}
class Csv {
  static contentType = 'text/csv';
  constructor(readonly rows: string[][]) {}
  write(out: { write(chunk: string): void }): void {
    out.write(this.rows.join('\n'));
  }
}
declare const booking: Booking;
declare const ticket: Ticket;
declare const dir: Dir;

// ---- Every line of the table is a type error at the handler.
export class TheTable {
  // @ts-expect-error Status(201, Booking): { id: 1 } is not a Booking (no guest)
  @Returns(Status(201, Booking)) shape() {
    return { id: 1 };
  }
  // @ts-expect-error Status(201, Booking): a string is not a Booking
  @Returns(Status(201, Booking)) text() {
    return 'ok';
  }
  // @ts-expect-error Status(201, Booking): null is not a Booking (declare Optional(Booking) for a 404)
  @Returns(Status(201, Booking)) nothing() {
    return null;
  }
  // @ts-expect-error Status(201, Booking): the status is the contract's; a { status, value } wrapper is not a Booking
  @Returns(Status(201, Booking)) wrapper() {
    return { status: 201, value: booking };
  }
  // @ts-expect-error Reply({ 200, 409 }): 404 is not one of its statuses
  @Returns(Reply({ 200: Booking, 409: Conflict })) undeclared() {
    return { status: 404 as const, value: booking };
  }
  // @ts-expect-error Reply({ 200, 409 }): 999 is no status of it (nor of HTTP)
  @Returns(Reply({ 200: Booking, 409: Conflict })) nonsense() {
    return { status: 999 as const, value: booking };
  }
  // @ts-expect-error Reply({ 200 }): a plain array of { name, value } is not headers
  @Returns(Reply({ 200: Booking })) arrayHeaders() {
    return {
      status: 200 as const,
      value: booking,
      headers: [{ name: 'Location', value: '/b/1' }],
    };
  }
  // @ts-expect-error Reply({ 200: Ticket }): a bare Ticket (with a status field) is not { status, value }
  @Returns(Reply({ 200: Ticket })) bare() {
    return ticket;
  }
  // @ts-expect-error [Booking]: one Booking is not a list
  @Returns([Booking]) one() {
    return booking;
  }
  // @ts-expect-error Versioned(Booking): a bare Booking, Versioned.of forgotten
  @Returns(Versioned(Booking)) forgot() {
    return booking;
  }
}

// ---- The same for every other contract.
export class EveryContract {
  // @ts-expect-error Optional(Booking): a string is neither a Booking nor nothing
  @Returns(Optional(Booking)) maybe() {
    return 'none';
  }
  // @ts-expect-error Booking: an async handler is held to it through its promise
  @Returns(Booking) async later() {
    return Promise.resolve('late');
  }
  // @ts-expect-error String: a number is not text
  @Returns(String) count() {
    return 3;
  }
  // @ts-expect-error Reply({ 200: Booking, 409: Conflict }): the 409 carries a Conflict, not a Booking
  @Returns(Reply({ 200: Booking, 409: Conflict })) crossed() {
    return reply(409, booking);
  }
  // @ts-expect-error Reply(Booking, { statuses: [200, 202] }): 201 is not listed
  @Returns(Reply(Booking, { statuses: [200, 202] })) unlisted() {
    return reply(201, booking);
  }
  // @ts-expect-error Reply(Booking): a status typed number might be any status: use reply(200, …)
  @Returns(Reply(Booking)) wide(status: number) {
    return { status, value: booking };
  }
  // @ts-expect-error Redirect(301): a look-alike object is not what Redirect.to builds
  @Returns(Redirect(301)) lookalike() {
    return { location: '/new', headers: headers.none };
  }
  // @ts-expect-error Redirect(301): a bare URL is not a redirect
  @Returns(Redirect(301)) url() {
    return '/new';
  }
  // @ts-expect-error Versioned(Booking): Versioned.of of another type
  @Returns(Versioned(Booking)) other() {
    return Versioned.of(1, 'text');
  }
  // @ts-expect-error Bytes: a number is not bytes
  @Returns(Bytes) notBytes() {
    return 7;
  }
  // @ts-expect-error FileBody: a file name is not a FileBody
  @Returns(FileBody) name() {
    return 'terms.txt';
  }
  // @ts-expect-error a self-writing class: a plain object has no write()
  @Returns(Csv) rows() {
    return { rows: [['a']] };
  }
  // @ts-expect-error Status(201, Csv): the same inside Status
  @Returns(Status(201, Csv)) rows201() {
    return [['a']];
  }
  // @ts-expect-error EventStream.of(Booking): each yielded event must be a Booking
  @Returns(EventStream.of(Booking)) async *strings() {
    yield 'not a booking';
  }
  // @ts-expect-error EventStream.of(Booking, { ids: true }): items are { id, data }, not bare data
  @Returns(EventStream.of(Booking, { ids: true })) async *bare() {
    yield new Booking(1, 'ada');
  }
  // @ts-expect-error EventStream.of(Booking): a single Booking is not its events
  @Returns(EventStream.of(Booking)) one() {
    return new Booking(1, 'ada');
  }
}

// ---- Headers: a plain object is checked, names and values strings, at most 8 (REF-21).
const h = { name: 'x', value: 'y' };
const nine = { A: '1', B: '2', C: '3', D: '4', E: '5', F: '6', G: '7', H: '8', I: '9' } as const;
const eight = { A: '1', B: '2', C: '3', D: '4', E: '5', F: '6', G: '7', H: '8' } as const;
// @ts-expect-error nine entries in headers.of
headers.of([h, h, h, h, h, h, h, h, h]);
// @ts-expect-error nine names in reply(…)'s headers
reply(200, booking, nine);
// @ts-expect-error nine names written in place
reply(200, booking, { A: '1', B: '2', C: '3', D: '4', E: '5', F: '6', G: '7', H: '8', I: '9' });
reply(200, booking, eight);
// @ts-expect-error nine names in Redirect.with
Redirect.with('/x', nine);
// @ts-expect-error nine names in Versioned.of
Versioned.of(1, booking, nine);
// @ts-expect-error nine names in Versioned.unchanged
Versioned.unchanged(1, nine);
// @ts-expect-error nine names in Bytes
new Bytes('x', 'text/plain', nine);
// @ts-expect-error nine names in a FileBody
new FileBody({ dir, name: 'x', headers: nine });
// @ts-expect-error a header value is a string
reply(200, booking, { 'Retry-After': 3 });
// @ts-expect-error so in Redirect.with
Redirect.with('/x', { 'X-Count': 3 });
// @ts-expect-error a plain array is not headers
reply(200, booking, [h]);
// @ts-expect-error nor in Redirect.with
Redirect.with('/x', [h]);
// the message says what to do
const message: TooManyHeaders =
  'a returned value carries at most 8 headers: drop one, or send it with c.setHeader';
void message;

export class LiteralHeaders {
  // @ts-expect-error nine names in a returned { status, value, headers } literal
  @Returns(Reply({ 200: Booking })) overfull() {
    return { status: 200 as const, value: booking, headers: nine };
  }
  @Returns(Reply({ 200: Booking })) full() {
    return { status: 200 as const, value: booking, headers: eight };
  }
}

// ---- The accepted forms.
const Shape = Union('Shape', { booking: Booking, none: null });
export class Accepted {
  @Returns(Booking) plain() {
    return booking;
  }
  // a structurally equal object is a Booking (TypeScript's rule)
  @Returns(Status(201, Booking)) created() {
    return { id: 1, guest: 'ann' };
  }
  @Returns(Status(201, Booking)) async later(): Promise<Booking> {
    return Promise.resolve(booking);
  }
  @Returns([Booking]) list(): Booking[] {
    return [booking];
  }
  @Returns(Status(200, [Booking])) frozen(): readonly Booking[] {
    return [booking];
  }
  @Returns(Optional(Booking)) none() {
    return null;
  }
  @Returns(Optional(Booking)) missing(m: Map<string, Booking>, id: string) {
    return m.get(id);
  }
  @Returns(String) text() {
    return 'ok';
  }
  @Returns(Status(202, String)) accepted() {
    return 'queued';
  }
  @Returns(Reply({ 201: Booking, 409: Conflict })) helper(taken: boolean) {
    if (taken) return reply(409, new Conflict());
    return reply(201, booking, { Location: '/bookings/1' });
  }
  @Returns(Reply({ 201: Booking, 409: Conflict })) async helperAsync() {
    return reply(201, booking, headers.of([{ name: 'Location', value: '/bookings/1' }]));
  }
  @Returns(Reply({ 201: Booking })) literal() {
    return { status: 201 as const, value: booking, headers: { Location: '/bookings/1' } };
  }
  @Returns(Reply(Booking, { statuses: [200, 202] })) listed(done: boolean) {
    return done ? reply(200, booking) : reply(202, booking, { 'Retry-After': '3' });
  }
  @Returns(Reply(Booking)) one() {
    return reply(200, booking);
  }
  @Returns(Reply(Status(201, Booking))) wrapped() {
    return reply(200, booking);
  }
  @Returns(Redirect(301)) moved() {
    return Redirect.to('/new');
  }
  @Returns(Redirect(303)) seeOther() {
    return Redirect.with('/done', { 'Cache-Control': 'no-store' });
  }
  @Returns(Versioned(Booking)) versioned(has: boolean) {
    if (has) return Versioned.unchanged(1, { 'Cache-Control': 'no-cache' });
    return Versioned.of(1, booking, { 'Cache-Control': 'no-cache' });
  }
  @Returns(Optional(Versioned(Booking))) maybeVersioned() {
    return null;
  }
  @Returns(Bytes) bytes() {
    return new Bytes('x', 'text/plain', { 'Content-Disposition': 'attachment' });
  }
  @Returns(Bytes) raw() {
    return new Uint8Array(1);
  }
  @Returns(FileBody) file() {
    return new FileBody({ dir, name: 'terms.txt', headers: { 'Content-Language': 'en' } });
  }
  @Returns(Csv) csv() {
    return new Csv([['a']]);
  }
  @Returns(Shape) shape() {
    return Shape.none;
  }
  // what the checker cannot see (JSON.parse gives any) the app checks at run time
  @Returns(Reply({ 200: Booking })) parsed(text: string) {
    return JSON.parse(text);
  }
  @Returns(EventStream.of(Booking)) async *typedEvents() {
    yield new Booking(1, 'ada');
  }
  @Returns(EventStream.of(Booking, { ids: true, event: 'booked' })) async *withIds() {
    yield { id: '1', data: new Booking(1, 'ada') };
  }
  @Returns(EventStream.of(Booking)) eventList(): Booking[] {
    return [new Booking(1, 'ada')];
  }
  @Returns(EventStream) async events(c: Ctx): Promise<void> {
    c.events().close();
    return Promise.resolve();
  }
}

// The value types, as a program may name them.
const placed: AnswerOf<ReturnType<typeof Status<typeof Booking>>> = booking;
const tied: ReplyOf<{ 200: typeof Booking; 409: typeof Conflict }> = reply(409, new Conflict());
// @ts-expect-error the 409 of that map carries a Conflict
const crossed: ReplyOf<{ 200: typeof Booking; 409: typeof Conflict }> = reply(409, booking);
const value: ReplyValue<Booking, 201> = reply(201, booking);
// @ts-expect-error reply(status, …) keeps its status literal: 202 is not 201
const other: ReplyValue<Booking, 201> = reply(202, booking);
void [placed, tied, crossed, value, other];
