import type { DescribedApp } from './load-app';

interface Operation {
  readonly parameters?: readonly { readonly name?: string; readonly in?: string }[];
  readonly security?: readonly Record<string, readonly string[]>[];
  readonly 'x-fw-version'?: string;
}

/**
 * The app's routes as an aligned text table: method, path, handler, whether it is idempotent (and
 * atomic), its guards (security schemes with their scopes) and its version, read from the OpenAPI
 * document the routes also serve, so the table says what clients are told.
 */
export function routeTable(app: DescribedApp): string {
  const doc = app.document() as { paths?: Record<string, Record<string, Operation>> };
  const rows = app.routes.map((r) => {
    const op = doc.paths?.[r.path]?.[r.method.toLowerCase()] ?? {};
    return [
      r.method,
      r.path,
      handlerOf(r.label),
      idempotent(op, r),
      guards(op),
      op['x-fw-version'] ?? '-',
    ];
  });
  const all = [['METHOD', 'PATH', 'HANDLER', 'IDEMPOTENT', 'GUARDS', 'VERSION'], ...rows];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  return all
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `POST /orders (OrdersController.create)` → `OrdersController.create`. */
const handlerOf = (label: string) => /\(([^)]*)\)$/.exec(label)?.[1] ?? label;

/** `atomic` (claim, writes and answer commit in one Postgres transaction), `yes` or `no`. */
function idempotent(op: Operation, route: DescribedApp['routes'][number]): string {
  const keyed = op.parameters?.some(
    (p) => p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key',
  );
  if (!keyed) return 'no';
  return atomicMark(route) ? 'atomic' : 'yes';
}

// Found by the mark key's name rather than by fw's IDEMPOTENT key: the entry may have loaded its own
// copy of fw-http, whose keys are other objects. The build refused `atomic: true` off a PgStore.
function atomicMark(route: DescribedApp['routes'][number]): boolean {
  const marks = route.marks;
  if (marks === undefined) return false;
  for (const key of marks.keys()) {
    if (key.name !== 'idempotent') continue;
    const mark = marks.get(key as never) as { readonly atomic?: unknown } | undefined;
    return mark?.atomic === true;
  }
  return false;
}

function guards(op: Operation): string {
  const all = (op.security ?? []).flatMap((req) =>
    Object.entries(req).map(([name, scopes]) =>
      scopes.length ? `${name}(${scopes.join(' ')})` : name,
    ),
  );
  return all.length ? all.join(', ') : '-';
}
