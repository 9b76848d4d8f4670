import { markRoute } from '../../route/decorators';
import { MarkKey } from '../../route/mark-key';

/** What `@Tool` declares about a route served as an MCP tool (`app.mcp()`). */
export interface ToolOptions {
  /**
   * The tool's name (1 to 128 of `A-Z a-z 0-9 _ . -`), unique in the app. Default the controller's
   * name without `Controller` and the method's, in snake case: `OrdersController.create` →
   * `orders_create`.
   */
  readonly name?: string;
  /** A human-readable title. Default none. */
  readonly title?: string;
  /** What the tool does, for the model. Default the route's summary, else `METHOD /path`. */
  readonly description?: string;
}

/** The key of a route's `@Tool` mark: `record.marks.get(TOOL)`. */
export const TOOL = new MarkKey<ToolOptions>('tool');

/**
 * Serves the route as an MCP tool on the app's MCP endpoint (`app.mcp()`): its arguments are one
 * flat object of the route's path and query parameters and its body's fields, its result the
 * route's answer. A call runs the route through the app's whole pipeline (guards, resolvers,
 * validation, idempotency) with the caller's `Authorization`; over an `@Idempotent` route it takes
 * its key from `params._meta.idempotencyKey`.
 * @example @Post() @Tool({ name: 'place_order', description: 'Places an order' }) @Idempotent(Orders, { by }) @Returns(Reply({ 201: Order })) create(@Body() o: NewOrder) { … }
 */
export function Tool(options: ToolOptions = {}): MethodDecorator {
  return markRoute(TOOL, Object.freeze({ ...options }));
}
