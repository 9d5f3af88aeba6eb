// One bounded memory for values computed from a string key: the request path remembers what it
// parsed or decided for values clients send again and again (Accept, Host, Origin, policy inputs).

/**
 * Values by string key, each computed once and at most `max` of them held: past the bound the
 * memory is emptied, never grown, so a client cycling through distinct keys costs only the
 * computation. Values must not be `undefined` (it means "not remembered").
 */
export class BoundedMemo<V> {
  private readonly values = new Map<string, V>();

  /** @param max how many keys are held at most (entries). */
  constructor(readonly max: number) {}

  /** The value remembered for `key`, else `compute()`'s, remembered. */
  get(key: string, compute: () => V): V {
    let v = this.values.get(key);
    if (v === undefined) this.put(key, (v = compute()));
    return v;
  }

  /**
   * The value remembered for `key`, or undefined: with {@link BoundedMemo.put}, the same as
   * {@link BoundedMemo.get} without a `compute` closure (for a path that counts its allocations).
   */
  peek(key: string): V | undefined {
    return this.values.get(key);
  }

  /** Remembers `value` for `key`; past the bound the memory is emptied first. */
  put(key: string, value: V): void {
    if (this.values.size >= this.max) this.values.clear();
    this.values.set(key, value);
  }

  /** Keys held now. */
  get size(): number {
    return this.values.size;
  }
}
