import type { RouteMarks } from '../core/mark-key';

/** The route a request was matched to, as middleware sees it in `c.route`. */
export interface RouteInfo {
  /** The path template, `{name}` segments included: `/orders/{id}/cancel`. */
  readonly template: string;
  /** The HTTP method the route answers. */
  readonly httpMethod: string;
  /** The controller class's name (`OrdersController`; a built-in route's own name). */
  readonly controller: string;
  /** The handler method's name (`cancel`). */
  readonly method: string;
  /** How Refusals and logs name it: `POST /orders/{id}/cancel (OrdersController.cancel)`. */
  readonly label: string;
  /**
   * The marks capabilities' decorators left on the route (`@RateLimit`, `@SecurityHeaders`, a
   * program's own): what middleware reads to treat one route its own way.
   * @example const audit = c.route?.marks.get(AUDIT)
   */
  readonly marks: RouteMarks;
}
