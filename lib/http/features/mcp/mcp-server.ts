import { Bytes } from '../../core/answers';
import { JSON_TYPE } from '../../core/media-types';
import { type Ctx } from '../../request/ctx';
import { isThenable } from '../../core/thenable';
import type { Capability, Host } from '../../route/extensions';
import { builtInRecord } from '../../route/route-record';
import { openApiFeature } from '../openapi-feature';
import { errorText, readMessage, resultText, RPC, RpcError, type RpcId } from './json-rpc';
import { callTool } from './tool-call';
import { ToolTable, type ToolEntry } from './tool-table';

/** How `app.mcp(options)` serves the app's tools. */
export interface McpOptions {
  /** Where the endpoint answers (POST). Default `/mcp`. */
  readonly path?: string;
  /**
   * A class with `static resolve(c)` (the one the routes take for their caller) resolved for every
   * request to the endpoint before anything else: its failure, such as a 401 with
   * `WWW-Authenticate`, is the answer. Default none: the endpoint is open, and each tool's route
   * still authenticates its calls.
   */
  readonly guard?: Function;
  /**
   * Origins a browser page may call the endpoint from (`https://app.example`), or a function
   * deciding; a request with another `Origin` is 403. Default: the endpoint's own origin only. A
   * request without `Origin` (not sent by a browser) passes.
   */
  readonly origins?: readonly string[] | ((origin: string, c: Ctx) => boolean);
  /** The server's name in `initialize`. Default the app's title. */
  readonly name?: string;
  /** The server's version in `initialize`. Default the app's version. */
  readonly version?: string;
  /** Instructions for the model, sent in `initialize`. Default none. */
  readonly instructions?: string;
}

/** The protocol revisions served, the latest first: what `initialize` answers a client asking for another. */
export const MCP_VERSIONS: readonly string[] = Object.freeze(['2025-11-25', '2025-06-18']);

/**
 * MCP's Streamable HTTP transport over the app's `@Tool` routes, as a capability:
 * `app.mcp(options)` is `app.use(mcpServer(options))`. One POST carries one JSON-RPC message; a
 * request is answered with one JSON body, a notification with 202. No session is kept (the spec
 * leaves them to the server): every call stands alone, so any instance can take it.
 */
export function mcpServer(options: McpOptions = {}): Capability {
  const path = options.path ?? '/mcp';
  if (!path.startsWith('/') || path.includes('{'))
    throw new TypeError(
      `app.mcp({ path: ${JSON.stringify(path)} }): a path starting with / and naming no parameter`,
    );
  const tools = new ToolTable();
  return {
    name: 'mcp',
    checks: [tools.check],
    register: (host) => {
      const endpoint = new McpEndpoint(host, tools, options);
      // GET (no stream is offered) and DELETE (no session to end) are 405, said here rather than
      // left to whatever else answers the path (a static tree's SPA fallback takes GETs).
      for (const [method, key] of [
        ['POST', 'answer'],
        ['GET', 'refuse'],
        ['DELETE', 'refuse'],
      ] as const) {
        const record = builtInRecord({
          method,
          path,
          name: method === 'POST' ? 'mcp' : `mcp.${method.toLowerCase()}`,
          controller: McpEndpoint,
          key,
          contract: Bytes,
          args: [{ kind: 'ctx' }],
          tag: 'mcp',
        });
        // It speaks JSON-RPC, not the app's HTTP API: MCP clients learn its tools from tools/list.
        openApiFeature().hideFromDocument(record);
        host.addBuiltIn(record, endpoint);
      }
      host.afterBuild(() => tools.define(host));
    },
  };
}

/** The endpoint: transport checks, then one JSON-RPC message. */
class McpEndpoint {
  readonly #host: Host;
  readonly #tools: ToolTable;
  readonly #options: McpOptions;

  constructor(host: Host, tools: ToolTable, options: McpOptions) {
    this.#host = host;
    this.#tools = tools;
    this.#options = options;
  }

  async answer(c: Ctx): Promise<void> {
    const refused = this.#refused(c);
    if (refused !== null) return send(c, refused.status, errorText(null, refused.error));
    const guard = this.#options.guard as { resolve(c: Ctx): unknown } | undefined;
    if (guard !== undefined) await c.resolveAsync(guard);
    let message;
    try {
      message = readMessage(await c.body());
    } catch (e) {
      if (e instanceof RpcError) return send(c, 400, errorText(null, e));
      throw e;
    }
    if (message.kind !== 'request') return c.empty(202);
    const { id, method, params } = message;
    try {
      send(c, 200, resultText(id, await this.#run(method, params, c)));
    } catch (e) {
      if (e instanceof RpcError) return send(c, 200, errorText(id, e));
      this.#failed(c, id, method, e);
    }
  }

  /** Any method but POST: this server offers no stream (GET) and keeps no session (DELETE). */
  refuse(c: Ctx): void {
    c.setHeader('allow', 'POST');
    const error = new RpcError(
      RPC.Refused,
      `Method Not Allowed: ${c.method}; send messages with POST`,
    );
    send(c, 405, errorText(null, error));
  }

  /** A request the transport refuses before reading it: its status and error, or null. */
  #refused(c: Ctx): { status: number; error: RpcError } | null {
    const origin = c.header('origin');
    if (origin !== null && !this.#allowed(origin, c))
      return refuse(403, `Forbidden: Origin ${origin} may not call this endpoint`);
    const type = c.header('content-type') ?? '';
    if (type.split(';')[0]!.trim().toLowerCase() !== JSON_TYPE)
      return refuse(415, 'Unsupported Media Type: a message is sent as application/json');
    if (!acceptsJson(c.header('accept')))
      return refuse(406, 'Not Acceptable: this server answers application/json');
    const version = c.header('mcp-protocol-version');
    if (version !== null && !MCP_VERSIONS.includes(version))
      return refuse(
        400,
        `Bad Request: unsupported MCP-Protocol-Version ${version} (supported: ${MCP_VERSIONS.join(', ')})`,
      );
    return null;
  }

  #allowed(origin: string, c: Ctx): boolean {
    const allowed = this.#options.origins;
    if (typeof allowed === 'function') return allowed(origin, c);
    if (allowed !== undefined) return allowed.includes(origin);
    return origin === `${c.protocol}://${c.host}`;
  }

  #run(method: string, params: Readonly<Record<string, unknown>>, c: Ctx): Promise<unknown> {
    switch (method) {
      case 'initialize':
        return Promise.resolve(this.#initialize(params));
      case 'ping':
        return Promise.resolve({});
      case 'tools/list':
        return this.#visible(c).then((tools) => ({ tools: tools.map((t) => t.definition) }));
      case 'tools/call':
        return this.#call(params, c);
      default:
        throw new RpcError(RPC.MethodNotFound, `Method not found: ${method}`);
    }
  }

  #initialize(params: Readonly<Record<string, unknown>>): unknown {
    const asked = params.protocolVersion;
    const o = this.#options;
    const host = this.#host.options;
    return {
      protocolVersion:
        typeof asked === 'string' && MCP_VERSIONS.includes(asked) ? asked : MCP_VERSIONS[0],
      capabilities: { tools: { listChanged: false } },
      serverInfo: {
        name: o.name ?? host.title ?? 'fw app',
        version: o.version ?? host.version ?? '0.0.0',
      },
      ...(o.instructions === undefined ? {} : { instructions: o.instructions }),
    };
  }

  async #call(params: Readonly<Record<string, unknown>>, c: Ctx): Promise<unknown> {
    const name = params.name;
    const tool = typeof name === 'string' ? this.#tools.entries.get(name) : undefined;
    // A tool the caller may not see is unknown to it, as for tools/list.
    if (tool === undefined || !(await sees(tool, c)))
      throw new RpcError(RPC.InvalidParams, `Invalid params: unknown tool ${String(name)}`);
    return callTool(this.#host, tool, params, c);
  }

  async #visible(c: Ctx): Promise<ToolEntry[]> {
    const out: ToolEntry[] = [];
    for (const tool of this.#tools.entries.values()) if (await sees(tool, c)) out.push(tool);
    return out;
  }

  #failed(c: Ctx, id: RpcId, method: string, e: unknown): void {
    this.#host.log(
      `error: ${c.method} ${c.path} (mcp): ${method} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`,
    );
    send(c, 200, errorText(id, new RpcError(RPC.InternalError, 'Internal error')));
  }
}

/**
 * Whether the caller of this request passes the tool's route guards: each resolves, and grants
 * the scopes the route requires. A tool the caller could only call to be refused is not listed.
 */
async function sees(tool: ToolEntry, c: Ctx): Promise<boolean> {
  for (const g of tool.guards) {
    const r = g.resolver as unknown as {
      resolve(c: Ctx): unknown;
      scopesOf?(c: Ctx, v: unknown): readonly string[];
    };
    let value: unknown;
    try {
      const v = c.resolving(r);
      value = isThenable(v) ? await v : v;
    } catch {
      return false;
    }
    if (g.scopes.length === 0) continue;
    const held = r.scopesOf?.(c, value) ?? [];
    if (!g.scopes.every((s) => held.includes(s))) return false;
  }
  return true;
}

function send(c: Ctx, status: number, text: string): void {
  c.send(status, JSON_TYPE, text);
}

const refuse = (status: number, message: string) => ({
  status,
  error: new RpcError(RPC.Refused, message),
});

/** No `Accept` takes anything; otherwise it must take JSON (the only answer this server gives). */
function acceptsJson(accept: string | null): boolean {
  if (accept === null) return true;
  return accept
    .split(',')
    .map((part) => part.split(';'))
    .some(([range, ...q]) => {
      const type = range!.trim().toLowerCase();
      const zero = q.some((p) => /^\s*q\s*=\s*0(?:\.0*)?\s*$/.test(p));
      return !zero && (type === JSON_TYPE || type === 'application/*' || type === '*/*');
    });
}
