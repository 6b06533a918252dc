/**
 * @kode/mcp: the tools of any Model Context Protocol server as Kode tools, over stdio (a local
 * child process) or streamable HTTP (with a fallback to HTTP+SSE), on the official MCP SDK.
 */
export { connectMcpServer } from './connect.js'
export type { McpConnection, McpServerInfo } from './connection.js'
export { McpConnectionError, type McpConnectionErrorCode } from './errors.js'
export {
  MCP_DEFAULTS,
  type McpApproval,
  type McpCommonOptions,
  type McpHttpServerOptions,
  type McpServerOptions,
  type McpStdioServerOptions,
  type McpToolInfo,
} from './options.js'
