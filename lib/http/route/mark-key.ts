// The keys and marks live in core, where the route a request was matched to (`c.route.marks`) can
// name them; route records and the capability door import them from here.
export { MarkKey, RouteMarks } from '../core/mark-key';
