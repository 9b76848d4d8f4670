// What the servers answer, shared by fw, raw node:http and Fastify. No import: the raw and Fastify
// processes load nothing of fw, so their memory is theirs alone.
/** About 16 KiB of JSON. */
export const BIG = Array.from({ length: 160 }, (_, i) => ({
  sku: `sku-${i}`,
  name: `Catalog item number ${i}`,
  unitPrice: 100 + i,
  tags: ['a', 'b'],
}));
export const KIB = JSON.stringify({ pad: 'x'.repeat(1012) });

export class Small {
  constructor(
    readonly id: number,
    readonly name: string,
    readonly tags: string[],
  ) {}
}
export const SMALL = new Small(1, 'small answer', ['a', 'b']);
