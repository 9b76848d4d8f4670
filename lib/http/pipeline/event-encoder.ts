import type { Contract } from '../core/answers';
import { HttpError } from '../core/errors';
import { firstIssue, type StandardResult } from '../core/standard-schema';
import { type Ctx } from '../request/ctx';
import { isThenable } from '../core/thenable';
import type { EventStream, ServerEvent } from '../request/events';
import type { Encoder } from '../route/extensions';
import { declaredWriter } from './declared-writer';

type EventsContract = Extract<Contract, { kind: 'events' }>;
/** Told each undeclared field an event left out (encode-answer's `DroppedField`). */
type DroppedField = (label: string, field: string) => void;
/** The JSON text of one event's data, as its declaration writes it (async for an async schema). */
type DataText = (v: unknown) => string | Promise<string>;

/**
 * The encoder of `EventStream.of(T)`: the handler's result is its events (an async or plain
 * iterable); each one's data is written by T's declared writer (or T's schema) on one `data:`
 * line, with the declared `event:` and, under `ids`, the item's `id:`. The stream opens when the
 * handler returns and closes when the events end. A client that leaves ends the iteration (its
 * `return()`, so a generator's `finally` runs) and nothing more is reported; an item that does not
 * fit, or a generator that throws, cuts the connection after what was sent (the app logs it), as
 * for any answer that fails after its head went out.
 */
export function eventEncoder(
  contract: EventsContract,
  label: string,
  dropped: DroppedField | null,
): Encoder {
  const text = dataText(contract.data!, label, dropped);
  const event = contract.event ?? undefined;
  const item = contract.ids ? withId(text, event, label) : (v: unknown) => framed(text(v), event);
  return (c, v) => {
    if (!isIterable(v))
      throw new HttpError(
        'UndeclaredAnswer',
        `${label}: an EventStream.of route returned ${what(v)}, not its events: return an iterable (an async * method yields them)`,
      );
    return pump(c, v, item);
  };
}

async function pump(
  c: Ctx,
  items: AsyncIterable<unknown> | Iterable<unknown>,
  item: (v: unknown) => ServerEvent | Promise<ServerEvent>,
): Promise<void> {
  const stream: EventStream = c.events();
  try {
    // A throw in the body (a send to a client that left) ends the iteration with its return().
    for await (const x of items) await stream.send(await item(x));
  } catch (e) {
    if (!stream.open) return;
    // The failure cuts the connection: node holds the last writes back until the next tick, and
    // the events sent before the failure must reach the client first.
    await new Promise((resolve) => setImmediate(resolve));
    throw e;
  }
  stream.close();
}

function framed(
  data: string | Promise<string>,
  event: string | undefined,
): ServerEvent | Promise<ServerEvent> {
  if (isThenable<string>(data)) return Promise.resolve(data).then((d) => framed(d, event));
  return event === undefined ? { data } : { event, data };
}

/** `{ id, data }` items: the id sent on its own line, the data written as declared. */
function withId(
  text: DataText,
  event: string | undefined,
  label: string,
): (v: unknown) => ServerEvent | Promise<ServerEvent> {
  return (v) => {
    const id = typeof v === 'object' && v !== null ? (v as { id?: unknown }).id : undefined;
    if (typeof id !== 'string')
      throw new HttpError(
        'AnswerMismatch',
        `${label}: an event of EventStream.of(…, { ids: true }) is { id, data } with a string id, got ${what(v)}`,
      );
    const sent = framed(text((v as { data?: unknown }).data), event);
    return isThenable<ServerEvent>(sent)
      ? Promise.resolve(sent).then((s) => ({ ...s, id }))
      : { ...sent, id };
  };
}

/** The data writer: a class's declared writer (only declared fields), or a schema's output. */
function dataText(data: Contract, label: string, dropped: DroppedField | null): DataText {
  if (data.kind === 'schema') {
    const standard = data.schema['~standard'];
    const json = declaredWriter(null, { label, dropped: null });
    const written = (r: StandardResult<unknown>): string => {
      if (r.issues !== undefined)
        throw new HttpError(
          'AnswerMismatch',
          `${label}: ${firstIssue('an event', r.issues)} (its EventStream.of schema refused it)`,
        );
      return json.text(r.value);
    };
    return (v) => {
      const r = standard.validate(v);
      return isThenable<StandardResult<unknown>>(r) ? Promise.resolve(r).then(written) : written(r);
    };
  }
  const type = (data as Extract<Contract, { kind: 'json' }>).type;
  const declared = declaredWriter(type, {
    label,
    dropped: dropped === null ? null : (field) => dropped(label, field),
  });
  return (v) => declared.text(v);
}

function isIterable(v: unknown): v is AsyncIterable<unknown> | Iterable<unknown> {
  if (typeof v !== 'object' || v === null || typeof v === 'string') return false;
  return (
    typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' ||
    typeof (v as Iterable<unknown>)[Symbol.iterator] === 'function'
  );
}

function what(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v !== 'object') return `a ${typeof v}`;
  const name = (v as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}
