import { JSON_TYPE } from '../../core/media-types';
import type { Ctx } from '../../request/ctx';
import type { Host, InjectedAnswer } from '../../route/extensions';
import { RPC, RpcError } from './json-rpc';
import type { ToolEntry } from './tool-table';

/** A `tools/call` result, as MCP gives it. */
export interface CallToolResult {
  readonly content: readonly { readonly type: 'text'; readonly text: string }[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly isError?: true;
}

/**
 * Runs one tool call: its arguments become the route's request (path, query, a JSON body), which
 * goes through the app's whole pipeline as an HTTP request would, with the caller's
 * `Authorization`, address, `Host` and request id and, for an `@Idempotent` route, `_meta.idempotencyKey`
 * as its `Idempotency-Key`. A 2xx is the result (a JSON object also as `structuredContent`); any
 * other answer is a result with `isError` and the route's failure body as text.
 */
export async function callTool(
  host: Host,
  tool: ToolEntry,
  params: Readonly<Record<string, unknown>>,
  c: Ctx,
): Promise<CallToolResult> {
  const args = params.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new RpcError(RPC.InvalidParams, 'Invalid params: arguments is an object');
  const headers = carried(c);
  if (tool.idempotent) headers['idempotency-key'] = keyOf(tool, params);
  const request = requestOf(tool, args as Record<string, unknown>);
  if (request.body !== null) headers['content-type'] = JSON_TYPE;
  const answer = await host.inject({
    method: tool.record.method,
    url: request.url,
    headers,
    ...(request.body === null ? {} : { body: request.body }),
    // The client as the MCP request's trusted proxies named it: the route's request comes from
    // there directly, so it sees the same address, scheme and host.
    remoteAddress: c.ip,
    encrypted: c.protocol === 'https',
  });
  return resultOf(answer);
}

/**
 * What the route's request carries on from the MCP request: who calls, and the host it was sent to
 * (a JWT's issuer may be checked against it).
 */
function carried(c: Ctx): Record<string, string> {
  const headers: Record<string, string> = { 'x-request-id': c.requestId(), host: c.host };
  const authorization = c.header('authorization');
  if (authorization !== null) headers.authorization = authorization;
  return headers;
}

function keyOf(tool: ToolEntry, params: Readonly<Record<string, unknown>>): string {
  const meta = params._meta;
  const key =
    typeof meta === 'object' && meta !== null
      ? (meta as { idempotencyKey?: unknown }).idempotencyKey
      : undefined;
  if (typeof key !== 'string' || key === '')
    throw new RpcError(
      RPC.InvalidParams,
      `Invalid params: tool ${tool.definition.name} runs an idempotent route: params._meta.idempotencyKey (a string, the same on every retry of one call) is required`,
    );
  return key;
}

/** The route's URL and JSON body (as text: an argument's value goes as the caller sent it). */
function requestOf(
  tool: ToolEntry,
  args: Record<string, unknown>,
): { url: string; body: string | null } {
  let path = tool.record.path;
  for (const name of tool.pathNames) {
    const v = args[name];
    if (!isScalar(v))
      throw new RpcError(
        RPC.InvalidParams,
        `Invalid params: argument ${JSON.stringify(name)} (a path parameter) is required: a string, number or boolean`,
      );
    path = path.replace(`{${name}}`, encodeURIComponent(String(v)));
  }
  const query = new URLSearchParams();
  for (const name of tool.queryNames) {
    const v = args[name];
    if (Array.isArray(v)) for (const each of v) query.append(name, String(each));
    else if (v !== undefined && v !== null) query.append(name, String(v));
  }
  const q = query.toString();
  let body: string | null = null;
  if (tool.bodyNames !== null) {
    const fields: Record<string, unknown> = {};
    for (const name of tool.bodyNames)
      if (Object.hasOwn(args, name))
        Object.defineProperty(fields, name, { value: args[name], enumerable: true });
    body = JSON.stringify(fields);
  }
  return { url: q === '' ? path : `${path}?${q}`, body };
}

const isScalar = (v: unknown): v is string | number | boolean =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

function resultOf(answer: InjectedAnswer): CallToolResult {
  const text = answer.body;
  if (answer.status < 200 || answer.status > 299)
    return { content: [{ type: 'text', text }], isError: true };
  const content = text === '' ? [] : [{ type: 'text' as const, text }];
  const type = answer.headers['content-type'];
  if (typeof type !== 'string' || !/^application\/(?:[\w.-]+\+)?json\b/.test(type))
    return { content };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return { content, structuredContent: value as Record<string, unknown> };
  } catch {
    // Not JSON after all: the text alone.
  }
  return { content };
}
