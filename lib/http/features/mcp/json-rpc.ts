// JSON-RPC 2.0 as MCP's Streamable HTTP transport uses it: one message per POST (no batches since
// MCP 2025-06-18), requests with a string or number id, notifications without one.

/** The error codes JSON-RPC 2.0 defines, and the one MCP's servers use for a refused HTTP request. */
export const RPC = Object.freeze({
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** A request the transport refuses (origin, media type, protocol version): a server error code. */
  Refused: -32000,
});

/** A JSON-RPC request id; MCP never uses null. */
export type RpcId = string | number;

/** One message, as read from a POST body. */
export type RpcMessage =
  | {
      readonly kind: 'request';
      readonly id: RpcId;
      readonly method: string;
      readonly params: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: 'notification'; readonly method: string }
  | { readonly kind: 'response' };

/** A JSON-RPC error answer, thrown where a request cannot go on. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Reads one message; a body that is no message throws the `RpcError` to answer it with. */
export function readMessage(body: Buffer): RpcMessage {
  let m: unknown;
  try {
    m = JSON.parse(body.toString('utf8'));
  } catch {
    throw new RpcError(RPC.ParseError, 'Parse error: the body is not JSON');
  }
  if (Array.isArray(m))
    throw new RpcError(
      RPC.InvalidRequest,
      'Invalid Request: batches are not supported (MCP 2025-06-18 and later send one message per POST)',
    );
  if (typeof m !== 'object' || m === null || (m as { jsonrpc?: unknown }).jsonrpc !== '2.0')
    throw new RpcError(RPC.InvalidRequest, 'Invalid Request: not a JSON-RPC 2.0 message');
  const o = m as Record<string, unknown>;
  const hasId = 'id' in o;
  if (typeof o.method !== 'string')
    return hasId && ('result' in o || 'error' in o)
      ? { kind: 'response' }
      : invalid('a request names its method');
  if (!hasId) return { kind: 'notification', method: o.method };
  const id = o.id;
  if (typeof id !== 'string' && (typeof id !== 'number' || !Number.isFinite(id)))
    return invalid('a request id is a string or a number');
  const params = o.params ?? {};
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return invalid('params is an object');
  return { kind: 'request', id, method: o.method, params: params as Record<string, unknown> };
}

function invalid(why: string): never {
  throw new RpcError(RPC.InvalidRequest, `Invalid Request: ${why}`);
}

/** The text of a result answer. */
export function resultText(id: RpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

/** The text of an error answer (`id` null when the request's could not be read). */
export function errorText(id: RpcId | null, err: RpcError): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code: err.code, message: err.message } });
}
