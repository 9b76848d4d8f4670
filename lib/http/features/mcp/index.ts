// `fw-http/mcp`: the app's @Tool routes served over MCP's Streamable HTTP transport by the
// `mcpServer()` capability. This file is the folder's only public door.
export { Tool, TOOL, type ToolOptions } from './tool';
export { mcpServer, MCP_VERSIONS, type McpOptions } from './mcp-server';
export type { ToolDefinition } from './tool-table';
export type { CallToolResult } from './tool-call';
