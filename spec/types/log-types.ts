// Type-level checks of the App's log options and onError: checked by `tsc --noEmit` in `npm test`, never run.
import pino from 'pino';
import { App } from 'fw-http';

// a pino logger is accepted as it is
new App({ logger: pino() });
new App({ logger: pino({ level: 'debug' }), level: 'debug' });
new App({ level: 'silent' });

const partial = {
  info: (_o: object, _m: string) => {},
  warn: (_o: object, _m: string) => {},
  error: (_o: object, _m: string) => {},
};
// @ts-expect-error a logger needs debug and child too (pino's shape)
new App({ logger: partial });
// @ts-expect-error the level is one of pino's names
new App({ level: 'loud' });

// onError's observer gets the error and { route, requestId, status, answered }
new App().onError((err, info) => {
  const route: string = info.route;
  const id: string = info.requestId;
  const status: number = info.status;
  const answered: boolean = info.answered;
  void [err, route, id, status, answered];
  // @ts-expect-error the info is read-only
  info.status = 200;
});
