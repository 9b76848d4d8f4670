import 'reflect-metadata';
import { IsEnum, IsInt, IsString, ValidateNested } from 'class-validator';
import { Type } from 'class-transformer';
import { Json, jsonEnum, Union } from 'fw-http';
import { Client } from 'fw-http/fetch';
import { httpPeer, run, type HttpPeer } from './loopback';

class Circle {
  @IsInt() r!: number;
}
class Square {
  @IsInt() side!: number;
}
const Shape = Union('Shape', { circle: Circle, square: Square, empty: null }, { tag: 'kind' });
type Shape = InstanceType<typeof Shape>;
const Boxed = Union('Boxed', { circle: Circle, empty: null }, { renameAll: 'UPPERCASE' });

enum Color {
  DarkBlue = 'DB',
  LightGreen = 'LG',
}
jsonEnum(Color, { renameAll: 'SCREAMING_SNAKE_CASE' });

@Json({ renameAll: 'kebab-case' })
class Line {
  @IsString() skuCode!: string;
}

@Json({ renameAll: 'kebab-case', rename: { id: 'order_id' } })
class Order {
  @IsString() id!: string;
  @IsString() createdAt!: string;
  @ValidateNested({ each: true }) @Type(() => Line) lines!: Line[];
  @ValidateNested() @Type(() => Shape) shape!: Shape;
  @ValidateNested() @Type(() => Boxed) boxed!: InstanceType<typeof Boxed>;
  @IsEnum(Color) color!: Color;
  untouched = 'default';
  total(): number {
    return this.lines.length;
  }
}

class Address {
  @IsString() street!: string;
}
class Plain {
  @IsString() name!: string;
  @ValidateNested() @Type(() => Address) address!: Address;
}

const ORDER = {
  order_id: '7',
  'created-at': '2024-05-01',
  lines: [{ 'sku-code': 'A1' }, { 'sku-code': 'B2' }],
  shape: { kind: 'circle', r: 2 },
  boxed: { EMPTY: {} },
  color: 'DARK_BLUE',
  extra: 1,
};

let peer: HttpPeer;
let client: Client;

beforeAll(async () => {
  peer = await httpPeer((req, res, seen) => {
    res.setHeader('content-type', 'application/json');
    switch (req.url) {
      case '/order':
        return res.end(JSON.stringify(ORDER));
      case '/orders':
        return res.end(
          JSON.stringify([ORDER, { ...ORDER, order_id: '8', shape: { kind: 'empty' } }]),
        );
      case '/shape':
        return res.end('{"kind":"square","side":3}');
      case '/odd-shape':
        return res.end('{"kind":"triangle"}');
      case '/plain':
        return res.end('{"name":"Ada","address":{"street":"Main"}}');
      case '/echo':
        return res.end(seen.body);
      default:
        res.statusCode = 404;
        return res.end('{}');
    }
  });
  client = new Client();
  client.start();
});

afterAll(async () => {
  await client.close();
  await peer.close();
});

describe('res.json(T) and the JSON spelling marker', () => {
  it('JSON-13 res.json(T) reads spelled names back into the class, nested classes, unions and enums included', async () => {
    const order = (await client.get(run, peer.url + 'order')).json(Order);
    expect(order).toBeInstanceOf(Order);
    expect([order.id, order.createdAt, order.color, order.untouched, order.total()]).toEqual([
      '7',
      '2024-05-01',
      Color.DarkBlue,
      'default',
      2,
    ]);
    expect(order.lines.map((l) => [l instanceof Line, l.skuCode])).toEqual([
      [true, 'A1'],
      [true, 'B2'],
    ]);
    expect(order.shape).toBeInstanceOf(Circle);
    expect((order.shape as Circle).r).toBe(2);
    expect(order.boxed).toBe(Boxed.empty);
    // Keys that spell no field are kept as they came, as plainToInstance keeps them.
    expect((order as unknown as { extra: number }).extra).toBe(1);
  });

  it('JSON-13 a list of a marked class, and a union at the top, are read by their marker', async () => {
    const orders = (await client.get(run, peer.url + 'orders')).json(Order) as unknown as Order[];
    expect(orders.map((o) => [o instanceof Order, o.id, o.shape === Shape.empty])).toEqual([
      [true, '7', false],
      [true, '8', true],
    ]);
    const shape: Shape = (await client.get(run, peer.url + 'shape')).json(Shape);
    expect(shape).toBeInstanceOf(Square);
    expect((shape as Square).side).toBe(3);
    const odd = await client.get(run, peer.url + 'odd-shape');
    expect(() => odd.json(Shape)).toThrow(
      'a value of the union Shape must be "kind" naming the variant (circle, square, empty)',
    );
  });

  it('JSON-13 a class that reaches no marker is read by class-transformer as before', async () => {
    const plain = (await client.get(run, peer.url + 'plain')).json(Plain);
    expect(plain).toBeInstanceOf(Plain);
    expect(plain.address).toBeInstanceOf(Address);
    expect(plain.address.street).toBe('Main');
  });

  it('JSON-12 an outbound JSON body is written with its marker, and reads back to the same value', async () => {
    const line = Object.assign(new Line(), { skuCode: 'C3' });
    const res = await client.postJson(run, peer.url + 'echo', [line]);
    expect(res.body).toBe('[{"sku-code":"C3"}]');
    expect((res.json(Line) as unknown as Line[])[0]).toEqual(line);
  });
});
