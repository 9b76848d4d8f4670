import { StringDecoder } from 'node:string_decoder';
import { FetchError } from './errors';
import type { Exchange } from './exchange';

/** How the events of one typed stream are read. */
export interface EventReading {
  /** True when each event carries an `id` the caller gets with its data (`{ id, data }`). */
  readonly ids: boolean;
  /** The most bytes one event's lines may hold; past it the iteration throws `BodyTooLarge`. */
  readonly maxEventBytes: number;
}

const LINE_END = /\r\n|\r|\n/;
/** No event ends at this line (an event's data may be JSON `null`). */
const NONE: unique symbol = Symbol('no event');

/**
 * The events of a typed stream, for the caller to iterate. `return()` (a `break` in `for await`)
 * closes the connection even before the first event was asked for, which a bare generator would
 * not: the exchange is ended however the caller stops.
 */
export function eventItems(ex: Exchange, reading: EventReading): AsyncIterableIterator<unknown> {
  const events = readEvents(ex, reading);
  const stop = async (): Promise<void> => {
    ex.discard();
    await ex.end();
  };
  return {
    next: () => events.next(),
    return: async (value?: unknown) => {
      const r = await events.return(value);
      await stop();
      return r;
    },
    throw: async (err?: unknown) => {
      await stop();
      return events.throw(err);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * The events of a `text/event-stream` body as they arrive, parsed as the HTML standard's event
 * stream interpretation says (comments skipped, `data:` lines joined with `\n`, an event dispatched
 * at a blank line, one with no data dropped); each event's data read as JSON. Leaving the loop
 * early (`break`, a throw) closes the connection; the exchange is ended either way.
 */
async function* readEvents(ex: Exchange, reading: EventReading): AsyncGenerator<unknown> {
  const decoder = new StringDecoder('utf8');
  const event = new PendingEvent(reading.maxEventBytes);
  let rest = '';
  let done = false;
  try {
    for (let chunk = await ex.chunk(); chunk !== null; chunk = await ex.chunk()) {
      let text = rest + decoder.write(Buffer.from(chunk));
      // A CR at the very end may be the first half of a CRLF: kept with the unfinished line.
      const cr = text.endsWith('\r');
      if (cr) text = text.slice(0, -1);
      const lines = text.split(LINE_END);
      rest = lines.pop()! + (cr ? '\r' : '');
      for (const line of lines) {
        const data = event.line(line);
        if (data !== NONE) yield reading.ids ? { id: event.lastId, data } : data;
      }
      event.hold(Buffer.byteLength(rest));
    }
    done = true;
  } finally {
    if (!done) ex.discard();
    await ex.end();
  }
}

/** The event being read: its data lines so far, and the last id seen (ids outlast their event). */
class PendingEvent {
  readonly #max: number;
  #data: string[] = [];
  #bytes = 0;
  lastId = '';

  constructor(max: number) {
    this.#max = max;
  }

  /** Counts an unfinished line against the bound, so a line that never ends cannot grow without one. */
  hold(length: number): void {
    if (this.#bytes + length > this.#max) throw tooLarge(this.#max);
  }

  /** Takes one line; returns the event's data (parsed) when the line ends an event that has some. */
  line(line: string): unknown {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return NONE;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.#bytes += Buffer.byteLength(value) + 1;
      if (this.#bytes > this.#max) throw tooLarge(this.#max);
      this.#data.push(value);
    } else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    return NONE;
  }

  #dispatch(): unknown {
    if (this.#data.length === 0) return NONE;
    const text = this.#data.join('\n');
    this.#data = [];
    this.#bytes = 0;
    return JSON.parse(text) as unknown;
  }
}

const tooLarge = (max: number): FetchError =>
  new FetchError('BodyTooLarge', `an event of the stream is larger than ${max} bytes (maxBody)`);
