/** Magic numbers of the types worth telling apart cheaply: the first bytes of a file decide. */
const SIGNATURES: readonly (readonly [string, readonly number[], number?])[] = [
  ['image/png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38]],
  ['application/pdf', [0x25, 0x50, 0x44, 0x46, 0x2d]],
  ['application/zip', [0x50, 0x4b, 0x03, 0x04]],
  ['application/gzip', [0x1f, 0x8b]],
  // RIFF....WEBP: the second signature starts at byte 8.
  ['image/webp', [0x57, 0x45, 0x42, 0x50], 8],
];

/** The type the first bytes of a file show, or null when they are none of the known ones. */
export function sniff(head: Uint8Array): string | null {
  for (const [type, bytes, at = 0] of SIGNATURES) {
    if (head.length < at + bytes.length) continue;
    if (at === 8 && !(head[0] === 0x52 && head[1] === 0x49 && head[2] === 0x46 && head[3] === 0x46))
      continue;
    let same = true;
    for (let i = 0; i < bytes.length && same; i++) same = head[at + i] === bytes[i];
    if (same) return type;
  }
  return null;
}
