import type { ExpectOptions, Store } from 'fw-http/cache';
import { describeStoreContract } from './store-contract';

// The README's example of a program's own store, word for word.
class MapStore implements Store {
  // a program's own store: the four operations, close, and peek
  readonly #m = new Map<string, { v: Buffer; until: number }>();
  peek(k: string) {
    const e = this.#m.get(k);
    return e && e.until > Date.now() ? e.v : null;
  }
  async get(k: string) {
    return this.peek(k);
  }
  async putIfAbsent(k: string, v: Buffer, ttlMs: number) {
    if (this.peek(k)) return false;
    this.#m.set(k, { v: Buffer.from(v), until: Date.now() + ttlMs });
    return true;
  }
  async put(k: string, v: Buffer, ttlMs: number, o?: ExpectOptions) {
    if (o?.expect && !this.peek(k)?.equals(o.expect)) return false;
    this.#m.set(k, { v: Buffer.from(v), until: Date.now() + ttlMs });
    return true;
  }
  async del(k: string, o?: ExpectOptions) {
    const v = this.peek(k);
    if (!v || (o?.expect && !v.equals(o.expect))) return false;
    return this.#m.delete(k);
  }
  async close() {
    this.#m.clear();
  }
}

describeStoreContract('MapStore (the README example)', () => new MapStore(), { ours: false });
