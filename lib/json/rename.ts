/**
 * How `renameAll` spells a name. There is deliberately no snake case: the six below are
 * the whole list, so `renameAll: 'snake_case'` is a type error.
 */
export type RenameAll =
  'lowercase' | 'UPPERCASE' | 'camelCase' | 'PascalCase' | 'SCREAMING_SNAKE_CASE' | 'kebab-case';

export const RENAME_ALL: readonly RenameAll[] = Object.freeze([
  'lowercase',
  'UPPERCASE',
  'camelCase',
  'PascalCase',
  'SCREAMING_SNAKE_CASE',
  'kebab-case',
]);

// A word is a run of capitals not followed by a lower-case letter (an acronym: `HTTP` in
// `HTTPServer`), an optional capital and lower-case letters, a run of digits, or anything else
// that is not a separator. `_`, `-` and spaces only separate.
const WORD = /\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|\p{N}+|[^\p{Lu}\p{Ll}\p{N}_\-\s]+/gu;

/**
 * The words of a TypeScript name, split at lower→upper changes, at digit boundaries, at the end
 * of an acronym and at `_`, `-` and spaces.
 *
 * @example
 * words('createdAt');  // ['created', 'At']
 * words('HTTPServer2'); // ['HTTP', 'Server', '2']
 */
export function words(name: string): string[] {
  return name.match(WORD) ?? [];
}

const capital = (w: string): string => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase();

/**
 * Spells `name` by one of the six rules.
 *
 * @example
 * renameWith('kebab-case', 'createdAt');           // 'created-at'
 * renameWith('SCREAMING_SNAKE_CASE', 'createdAt'); // 'CREATED_AT'
 * renameWith('PascalCase', 'createdAt');           // 'CreatedAt'
 */
export function renameWith(rule: RenameAll, name: string): string {
  const ws = words(name);
  const first = ws[0];
  if (first === undefined) return name;
  switch (rule) {
    case 'lowercase':
      return ws.join('').toLowerCase();
    case 'UPPERCASE':
      return ws.join('').toUpperCase();
    case 'camelCase':
      return first.toLowerCase() + ws.slice(1).map(capital).join('');
    case 'PascalCase':
      return ws.map(capital).join('');
    case 'SCREAMING_SNAKE_CASE':
      return ws.join('_').toUpperCase();
    case 'kebab-case':
      return ws.join('-').toLowerCase();
  }
}
