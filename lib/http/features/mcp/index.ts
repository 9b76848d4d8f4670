// Internal door of lib/http/features/mcp: the app's @Tool routes served over MCP's Streamable
// HTTP transport. The public bits are re-exported by lib/http/index.ts.
export { Tool, TOOL, type ToolOptions } from './tool';
export { mcpServer, MCP_VERSIONS, type McpOptions } from './mcp-server';
export type { ToolDefinition } from './tool-table';
export type { CallToolResult } from './tool-call';
