import { type Ctx } from 'fw-http';
import {
  builtInRecord,
  MarkKey,
  markRoute,
  type Around,
  type Capability,
  type Host,
  type OperationSink,
  type RecordCheck,
  type RouteRecord,
} from 'fw-http/capabilities';

// A capability of a program's own, in one file, through the public door only: `@Audit('orders.cancel')`
// marks a route; every answer it gives becomes one entry of an audit trail (action, route, status,
// request id); its OpenAPI operation says so (`x-audit`, the `audited` tag); an action that is not
// lower-case words joined by dots is a Refusal naming the route; and `GET /audit` lists the trail.
// docs/guide/index.md ("Your own capability") walks through it; spec/http/user-capability.spec.ts runs it.

/** What `@Audit` leaves on a route. */
export interface AuditMark {
  readonly action: string;
}

const AUDIT = new MarkKey<AuditMark>('audit');

/**
 * Marks a route audited: each of its answers (failures too) is one entry of the app's `AuditTrail`.
 * @example @Post('/{id}/cancel') @Audit('orders.cancel') cancel(@Param('id') id: string) { … }
 */
export const Audit = (action: string): MethodDecorator => markRoute(AUDIT, { action });

/** One audited answer. */
export interface AuditEntry {
  readonly action: string;
  /** `POST /orders/{id}/cancel (OrdersController.cancel)`. */
  readonly route: string;
  /** The status sent; 0 when the client left before any was. */
  readonly status: number;
  readonly requestId: string;
}

export interface AuditOptions {
  /** Entries kept; the oldest go first. Default 1,000. */
  readonly maxEntries?: number;
  /** Where the trail is listed (text, one entry a line). Default `/audit`; `false` for no route. */
  readonly path?: string | false;
}

const ACTION = /^[a-z][a-z0-9]*(\.[a-z][a-z0-9]*)*$/;

/**
 * The audit capability: `app.use(new AuditTrail())`. Its members are exactly what fw's own
 * capabilities are made of (`Capability`).
 */
export class AuditTrail implements Capability {
  readonly name = 'audit';
  readonly #entries: AuditEntry[] = [];
  readonly #max: number;
  readonly #path: string | false;

  constructor(options: AuditOptions = {}) {
    this.#max = options.maxEntries ?? 1_000;
    this.#path = options.path ?? '/audit';
    if (!Number.isSafeInteger(this.#max) || this.#max < 1)
      throw new TypeError(
        `AuditTrail maxEntries must be a whole number of at least 1, got ${this.#max}`,
      );
  }

  /** The entries kept, the oldest first. */
  get entries(): readonly AuditEntry[] {
    return this.#entries;
  }

  /** A Refusal for an action the trail could not be searched by. */
  readonly checks: readonly RecordCheck[] = [
    (record, _services, problems) => {
      const mark = record.marks.get(AUDIT);
      if (mark !== undefined && !ACTION.test(mark.action))
        problems.push(
          `${record.label}: @Audit(${JSON.stringify(mark.action)}): an action is lower-case words joined by dots (orders.cancel)`,
        );
    },
  ];

  /** Around audited routes only: a route without the mark gets no step at all (null). */
  readonly arounds = [
    (record: RouteRecord): Around | null => {
      const mark = record.marks.get(AUDIT);
      if (mark === undefined) return null;
      return (c: Ctx, proceed) => {
        // Once the answer is over, whatever it was: a failure thrown by the handler is written by
        // the app after this step returns, and its status is only known then.
        c.onFinished(({ status }) =>
          this.#add({ action: mark.action, route: record.label, status, requestId: c.requestId() }),
        );
        return proceed();
      };
    },
  ];

  readonly describe = (record: RouteRecord, op: OperationSink): void => {
    const mark = record.marks.get(AUDIT);
    if (mark === undefined) return;
    op.tag('audited').extension('x-audit', mark.action);
  };

  readonly register = (host: Host): void => {
    if (this.#path === false) return;
    const record = builtInRecord({
      path: this.#path,
      name: 'audit',
      controller: AuditTrail,
      key: 'listing',
      contract: String,
      tag: 'audit',
      summary: 'The audit trail, one entry a line, the oldest first',
    });
    host.addBuiltIn(record, this);
  };

  /** The answer of `GET /audit`. */
  listing(): string {
    return this.#entries.map((e) => `${e.action} ${e.status} ${e.requestId} ${e.route}\n`).join('');
  }

  #add(entry: AuditEntry): void {
    if (this.#entries.length === this.#max) this.#entries.shift();
    this.#entries.push(entry);
  }
}
