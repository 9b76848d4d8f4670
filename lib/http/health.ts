import { IsIn } from 'class-validator';
import type { App } from './app';
import { toContract } from './answers';
import type { Ctx } from './ctx';
import { fail } from './fail';
import type { RouteRecord } from './route-record';

/** Something provided whose readiness the health route asks on every probe (an opened fetch Target). */
interface Probed {
  readonly name: string;
  probe(): Promise<boolean>;
}
const isProbed = (s: unknown): s is Probed => typeof s === 'object' && s !== null && typeof (s as Probed).probe === 'function' && typeof (s as Probed).name === 'string';

/** The health answer: `{ "status": "ok" }`. */
export class HealthStatus {
  // Declared for the API description, which reads class-validator metadata.
  @IsIn(['ok']) readonly status: 'ok';
  constructor(status: 'ok') {
    this.status = status;
  }
}

class HealthCheck {
  constructor(readonly app: App) {}
  async check(_c: Ctx): Promise<HealthStatus> {
    if (this.app.stopping) throw fail.status(503, 'server is stopping');
    const probed = this.app.provided.filter(isProbed);
    const ready = await Promise.all(probed.map((p) => p.probe().catch(() => false)));
    const down = probed.filter((_, i) => !ready[i]).map((p) => p.name);
    if (down.length) throw fail.status(503, 'not ready: %s', down.join(', '));
    return new HealthStatus('ok');
  }
}

/** Adds the health route: 200 `{ "status": "ok" }`; 503 while a provided target is not ready or the server is stopping. */
export function addHealthRoute(app: App, path: string): void {
  const record: RouteRecord = Object.freeze({
    method: 'GET',
    path,
    label: `GET ${path} (health)`,
    controller: HealthCheck,
    key: 'check',
    operationId: 'health',
    summary: 'Health: 503 while a target is not ready or the server is stopping',
    tag: 'health',
    args: Object.freeze([{ kind: 'ctx' as const }]),
    contract: toContract(HealthStatus),
    returnType: Promise,
    idempotent: null,
    upgrade: null,
    rate: null,
    builtIn: true,
    failures: [503],
  });
  app.addBuiltIn(record, new HealthCheck(app));
}
