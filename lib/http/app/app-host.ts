import type { Ctx } from '../request/ctx';
import type { Core } from '../request/exchange';
import { ctxOf } from '../request/exchange-of';
import type {
  AnswerCompressor,
  Capability,
  Host,
  InjectedAnswer,
  InjectedRequest,
} from '../route/extensions';
import type { RouteRecord } from '../route/route-record';

/** What of the app its capabilities' host reads: the app's public side. */
export interface HostedApp {
  readonly options: Host['options'];
  readonly stopping: boolean;
  readonly provided: readonly unknown[];
  readonly routes: readonly RouteRecord[];
  readonly failureShape: Host['failureShape'];
  readonly defaultVersion: string | null;
  log(line: string): void;
  inject(request: InjectedRequest): Promise<InjectedAnswer>;
  provide(instance: object, options?: { readonly as?: object }): unknown;
}

/** Where the app keeps what its capabilities add; the host writes into these and the app reads them. */
export interface HostSlots {
  readonly builtIns: { record: RouteRecord; instance: object }[];
  readonly atBuild: ((problems: string[]) => void)[];
  readonly afterBuild: ((host: Host) => void)[];
  readonly fallbacks: ((c: Ctx) => unknown)[];
  readonly capabilities: readonly Capability[];
  readonly core: Core;
}

/**
 * The app as its capabilities see it (`register(host)`): fw's own are given this object exactly
 * as a program's are, so the `App` class itself carries no member only fw may call.
 */
export class AppHost implements Host {
  readonly #app: HostedApp;
  readonly #slots: HostSlots;

  constructor(app: HostedApp, slots: HostSlots) {
    this.#app = app;
    this.#slots = slots;
  }

  get options(): Host['options'] {
    return this.#app.options;
  }

  get stopping(): boolean {
    return this.#app.stopping;
  }

  get provided(): readonly unknown[] {
    return this.#app.provided;
  }

  get routes(): readonly RouteRecord[] {
    return this.#app.routes;
  }

  get failureShape(): Host['failureShape'] {
    return this.#app.failureShape;
  }

  get capabilities(): readonly Capability[] {
    return this.#slots.capabilities;
  }

  get defaultVersion(): string | null {
    return this.#app.defaultVersion;
  }

  log(line: string): void {
    this.#app.log(line);
  }

  provide(instance: object, options?: { readonly as?: object }): void {
    this.#app.provide(instance, options);
  }

  addBuiltIn(record: RouteRecord, instance: object): void {
    this.#slots.builtIns.push({ record, instance });
  }

  atBuild(fn: (problems: string[]) => void): void {
    this.#slots.atBuild.push(fn);
  }

  afterBuild(fn: (host: Host) => void): void {
    this.#slots.afterBuild.push(fn);
  }

  addFallback(fn: (c: Ctx) => unknown): void {
    this.#slots.fallbacks.push(fn);
  }

  compressAnswers(step: AnswerCompressor): void {
    this.#slots.core.compress = (x, bag, type, body) => step(ctxOf(x), bag, type, body);
  }

  inject(request: InjectedRequest): Promise<InjectedAnswer> {
    return this.#app.inject(request);
  }
}
