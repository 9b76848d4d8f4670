// The bodies of the form case, built in the load generator's process only.

/** A form of exactly 1 MiB (the body limit) made of `piece(i)`s joined by `&`. */
function mibForm(piece: (i: number) => string): string {
  const parts: string[] = [];
  let size = -1;
  for (let i = 0; ; i++) {
    const p = piece(i);
    if (size + 1 + p.length > 1024 * 1024) break;
    parts.push(p);
    size += 1 + p.length;
  }
  return parts.join('&');
}
/** One name, repeated (about 175,000 times): the case that once cost an hour. */
export const ONE_KEY_FORM = mibForm(() => 'tag=x');
/** Distinct names (about 116,000): what reading 1 MiB costs when no name repeats. */
export const DISTINCT_FORM = mibForm((i) => `k${i}=x`);
