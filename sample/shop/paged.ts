import { MarkKey, markRoute, type Capability } from 'fw-http/capabilities';

const PAGED = new MarkKey<true>('paged');

/**
 * Marks a route that answers one page of a list, with `Link: <…>; rel="next"` (RFC 8288) when
 * another follows: `pages` lists that header in the route's document.
 * @example @Get() @Paged() @Returns(Reply([Order])) list() { … }
 */
export const Paged = (): MethodDecorator => markRoute(PAGED, true);

/** The capability behind `@Paged()`: a program's own, added with `app.use(pages)` as fw's are. */
export const pages: Capability = {
  name: 'pages',
  describe: (record, op) => {
    if (record.marks.get(PAGED) !== true) return;
    op.header(200, 'Link', {
      description:
        'The next page, when more follow (absent on the last page): a relative URL naming the last item of this page',
      schema: { type: 'string' },
      example: '</orders?after=3f1c…>; rel="next"',
    });
  },
};
