/**
 * The brand of a handler parameter that the server fills itself: the `Ctx`, a `Tx`, a `Session`,
 * credentials, a resolved caller, a provided service. A typed client (`clientOf`) leaves such
 * parameters out of its methods. Types cannot see decorators or a class's `static resolve`, so a
 * program's own resolved classes and services carry the brand as a declared, never-set field.
 *
 * @example
 * class Account {
 *   declare readonly [SERVER_SIDE]?: true;
 *   static resolve(c: Ctx): Account { … }
 * }
 */
export const SERVER_SIDE: unique symbol = Symbol('fw.serverSide');

/** A type carrying the `SERVER_SIDE` brand (an interface extends it; a class declares the field). */
export interface ServerSide {
  readonly [SERVER_SIDE]?: true;
}
