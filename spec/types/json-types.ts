// Type-level rules of the JSON spelling marker: checked by `tsc --noEmit` in `npm test`, never run.
import { Json, jsonEnum, Returns, Union, type RenameAll, type UnitVariant } from 'fw-http';
import type { JsonClass } from 'fw-http/fetch';

// JSON-05 the six spellings are accepted
const six: RenameAll[] = [
  'lowercase',
  'UPPERCASE',
  'camelCase',
  'PascalCase',
  'SCREAMING_SNAKE_CASE',
  'kebab-case',
];
void six;

// JSON-06 there is no snake-case option: renameAll: 'snake_case' is a type error
// @ts-expect-error no snake case
@Json({ renameAll: 'snake_case' })
export class Snake {}

// @ts-expect-error no snake case on a union either
Union('Snaky', { a: Snake }, { renameAll: 'snake_case' });

enum Color {
  DarkBlue = 'DarkBlue',
}
// @ts-expect-error no snake case on an enum either
jsonEnum(Color, { renameAll: 'snake_case' });
// An enum's rename names its members; an enum has no tag.
jsonEnum(Color, { rename: { DarkBlue: 'navy' } });
// @ts-expect-error no such member
jsonEnum(Color, { rename: { Red: 'red' } });
// @ts-expect-error an enum has no tag
jsonEnum(Color, { tag: 'kind' });

// JSON-10 JSON-11 rename is allowed alone and beside renameAll
@Json({ rename: { a: 'b' } })
export class Alone {}
@Json({ renameAll: 'kebab-case', rename: { a: 'b' } })
export class Both {}

// JSON-01 a union's values are its variants' instances and its constants
class Circle {
  r = 1;
}
class Square {
  side = 1;
}
const Shape = Union('Shape', { circle: Circle, square: Square, empty: null }, { tag: 'kind' });
type Shape = InstanceType<typeof Shape>;
const values: Shape[] = [new Circle(), new Square(), Shape.empty];
void values;
const empty: UnitVariant<'empty'> = Shape.empty;
void empty;
// @ts-expect-error only payload-less variants are constants
void Shape.circle;
// @ts-expect-error a string is no variant
const wrong: Shape = 'circle';
void wrong;

// A union is usable where a class is: @Returns, and res.json(T) on the outbound side.
export class Controllerish {
  @Returns(Shape) get(): Shape {
    return Shape.empty;
  }
}
const readable: JsonClass<Shape> = Shape;
void readable;
