import type { McpApproval, McpToolInfo } from './options.js'

/** Whether one tool's calls need approval: always, never, or decided per call from its arguments. */
export type ToolApproval = boolean | ((args: Record<string, unknown>) => boolean | Promise<boolean>)

/** Reads a server's `needsApproval` option for one of its tools. */
export function approvalFor(option: McpApproval | undefined, tool: McpToolInfo): ToolApproval {
  if (option === undefined || typeof option === 'boolean') return option ?? false
  if (typeof option === 'function') return (args) => option(tool, args)
  return option.includes(tool.serverToolName)
}
