/** Fill level (0..1) of a store past which a warning is logged. */
export const FILL_WARN_AT = 0.8;
/** Fill level below which the warning is armed again (so a store hovering at the mark logs once). */
export const FILL_REARM_AT = 0.7;

/**
 * Watches how full an idempotency store is as claims land, and says once when it passes
 * `FILL_WARN_AT`: a full store answers every new key 503 `StoreFull` until records lapse, so the
 * warning comes while there is still room. One comparison a claim; a line per crossing.
 */
export class FillWatch {
  #armed = true;

  /** Looks at `fill` (null: the store cannot tell); logs through `log` when it crosses the mark. */
  check(fill: number | null, log: (line: string) => void, what: string): void {
    if (fill === null) return;
    if (this.#armed) {
      if (fill < FILL_WARN_AT) return;
      this.#armed = false;
      log(
        `warning: ${what}: the idempotency store is ${Math.round(fill * 100)} % full; at 100 % new keys are refused 503 StoreFull until records lapse (give the store more bytes, shorten ttlSeconds or lower maxBytesPerCaller)`,
      );
    } else if (fill < FILL_REARM_AT) this.#armed = true;
  }
}
