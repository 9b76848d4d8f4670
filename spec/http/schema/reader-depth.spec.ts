import 'reflect-metadata';
import {
  IsOptional,
  IsString,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { Type } from 'class-transformer';
import { Union } from '../../../lib/json';
import { MAX_DEPTH, compileReader } from '../../../lib/http/schema';
import type { Read } from '../../../lib/http/schema';
import { SlowNode, TreeNode } from '../../support/self-holding';

// A class that holds itself, directly, through a list and through a union: the reader follows
// at most maxDepth levels of objects and arrays (the body itself counted), and refuses one
// more as a failure naming its path, never by running out of stack.

class Leaf {
  @IsString() name!: string;
}
class Branch {
  @ValidateNested() @Type(() => Wrapped) inner!: unknown;
}
const Wrapped = Union('Wrapped', { leaf: Leaf, branch: Branch });

/** `levels` objects, each the `child` of the one before. */
function chain(levels: number): Record<string, unknown> {
  let node: Record<string, unknown> = { name: 'n' };
  for (let i = 1; i < levels; i++) node = { name: 'n', child: node };
  return node;
}

/** `levels` levels counting the lists: `{ children: [ { children: [ … ] } ] }`. */
function listChain(levels: number): Record<string, unknown> {
  let node: Record<string, unknown> = { name: 'n' };
  for (let i = 2; i < levels; i += 2) node = { name: 'n', children: [node] };
  return node;
}

function refusal(r: Read): Read & { ok: false } {
  if (r.ok) throw new Error('expected a refusal');
  return r;
}

describe('compileReader maxDepth', () => {
  it('defaults to 64: exactly 64 nested objects are read, 65 are refused naming the path', () => {
    expect(MAX_DEPTH).toBe(64);
    const read = compileReader(TreeNode, { source: 'body' });
    expect(read(chain(64)).ok).toBe(true);
    const r = refusal(read(chain(65)));
    expect(r.tooDeep).toBe(true);
    expect(r.field).toBe('body' + '.child'.repeat(64));
    expect(r.message).toMatch(/^body(\.child)+…(\.child)+: nested deeper than 64$/);
    expect(Buffer.byteLength(r.message)).toBeLessThanOrEqual(240);
  });

  it('names the whole path when it is short', () => {
    const read = compileReader(TreeNode, { source: 'body', maxDepth: 2 });
    expect(read(chain(2)).ok).toBe(true);
    expect(refusal(read(chain(3)))).toEqual({
      ok: false,
      field: 'body.child.child',
      message: 'body.child.child: nested deeper than 2',
      tooDeep: true,
    });
  });

  it('counts a list as a level', () => {
    const read = compileReader(TreeNode, { source: 'body', maxDepth: 4 });
    // The body 1, its list 2, the element 3, its list 4; an element in that list would be 5.
    expect(read({ name: 'n', children: [{ name: 'n', children: [] }] }).ok).toBe(true);
    expect(
      refusal(read({ name: 'n', children: [{ name: 'n', children: [{ name: 'n' }] }] })).message,
    ).toBe('body.children[0].children[0]: nested deeper than 4');
  });

  it('counts a union and its payload as levels', () => {
    class Holder {
      @ValidateNested() @Type(() => Wrapped) top!: unknown;
    }
    const read = compileReader(Holder, { source: 'body', maxDepth: 5 });
    // Holder 1, union 2, Branch 3, union 4, Leaf 5.
    expect(read({ top: { branch: { inner: { leaf: { name: 'x' } } } } }).ok).toBe(true);
    // Holder 1, union 2, Branch 3, union 4, Branch 5: its union would be 6.
    expect(
      refusal(read({ top: { branch: { inner: { branch: { inner: { leaf: { name: 'x' } } } } } } }))
        .message,
    ).toBe('body.top.branch.inner.branch.inner: nested deeper than 5');
  });

  it('a value of a field declared as any object is not walked', () => {
    const read = compileReader(TreeNode, { source: 'body', maxDepth: 2 });
    expect(read({ name: 'n', meta: chain(50) }).ok).toBe(true);
  });

  it('a class read through class-validator has its whole input walked first, undeclared fields too', () => {
    const read = compileReader(SlowNode, { source: 'body', maxDepth: 3 });
    expect(read(chain(3)).ok).toBe(true);
    expect(refusal(read(chain(4))).message).toBe('body.child.child.child: nested deeper than 3');
    expect(refusal(read({ name: 'n', extra: { a: [{ b: 1 }] } })).message).toBe(
      'body.extra.a[0]: nested deeper than 3',
    );
    expect(read({ name: 'n', extra: { a: [1] } }).ok).toBe(true);
  });

  it('a body 20,000 levels deep is refused, not a stack overflow', () => {
    for (const cls of [TreeNode, SlowNode]) {
      const r = refusal(compileReader(cls, { source: 'body' })(chain(20_000)));
      expect(r.message).toMatch(/: nested deeper than 64$/);
    }
    expect(refusal(compileReader(TreeNode, { source: 'body' })(listChain(20_000))).tooDeep).toBe(
      true,
    );
  });

  it('refuses a maxDepth that is not a whole number of at least 1', () => {
    expect(() => compileReader(TreeNode, { source: 'body', maxDepth: 0 })).toThrow(
      'maxDepth must be a whole number from 1, got 0',
    );
  });

  it('names its own bound after another reader ran inside it (a custom constraint that reads)', () => {
    const inner = compileReader(TreeNode, { source: 'body', maxDepth: 40 });
    @ValidatorConstraint({ name: 'aTree' })
    class ATree implements ValidatorConstraintInterface {
      validate(v: unknown): boolean {
        return inner(v).ok;
      }
    }
    class Checked {
      @Validate(ATree) tree!: unknown;
    }
    class Outer {
      @ValidateNested() @Type(() => Checked) checked!: Checked;
      @IsOptional() @ValidateNested() @Type(() => TreeNode) node?: TreeNode;
    }
    const read = compileReader(Outer, { source: 'body', maxDepth: 3 });
    const r = refusal(read({ checked: { tree: { name: 'n' } }, node: chain(3) }));
    expect(r.message).toBe('body.node.child.child: nested deeper than 3');
  });
});
