import type { ExpectOptions, Store } from 'fw-http/cache';
import { describeStoreContract } from './store-contract';

// The README's example of a program's own store, word for word.
class MapStore implements Store {
  // a program's own store: the four operations and close; it may answer at once, as this one does
  readonly #m = new Map<string, { v: Buffer; until: number }>();
  get(k: string) {
    const e = this.#m.get(k);
    return e && e.until > Date.now() ? e.v : null;
  }
  putIfAbsent(k: string, v: Buffer, ttlMs: number) {
    if (this.get(k)) return false;
    this.#m.set(k, { v, until: Date.now() + ttlMs }); // v is handed over: kept as it is
    return true;
  }
  put(k: string, v: Buffer, ttlMs: number, o?: ExpectOptions) {
    if (o?.expect && !this.get(k)?.equals(o.expect)) return false;
    this.#m.set(k, { v, until: Date.now() + ttlMs });
    return true;
  }
  del(k: string, o?: ExpectOptions) {
    const v = this.get(k);
    if (!v || (o?.expect && !v.equals(o.expect))) return false;
    return this.#m.delete(k);
  }
  async close() {
    this.#m.clear();
  }
}

describeStoreContract('MapStore (the README example)', () => new MapStore(), { ours: false });
