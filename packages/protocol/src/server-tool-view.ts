import type { ServerToolPart } from './parts.js'

/**
 * What a `server_tool` part shows a reader, whatever wire it came from:
 * - `call`: the provider ran a named tool (Anthropic's `server_tool_use`, `mcp_tool_use`) on `input`;
 * - `code`: the model wrote code the provider ran (Gemini's `executableCode`);
 * - `code_output`: what that code printed, and its `outcome` when given (`OUTCOME_OK`);
 * - `result`: anything else (a search's results, a Responses item), `content` when the block has
 *   one, else the block itself.
 */
export type ServerToolView =
  | { kind: 'call'; name: string; input: unknown }
  | { kind: 'code'; code: string; language?: string }
  | { kind: 'code_output'; output: string; outcome?: string }
  | { kind: 'result'; type: string; content: unknown }

/** How a `server_tool` part reads (see {@link ServerToolView}); never throws on an odd block. */
export function serverToolView(part: ServerToolPart): ServerToolView {
  const block = part.block as Record<string, unknown> & { type: string }
  if (typeof block.name === 'string') return { kind: 'call', name: block.name, input: block.input ?? {} }
  const code = field(block, 'executableCode')
  if (block.type === 'executableCode' && typeof code?.code === 'string') {
    return typeof code.language === 'string'
      ? { kind: 'code', code: code.code, language: code.language }
      : { kind: 'code', code: code.code }
  }
  const result = field(block, 'codeExecutionResult')
  if (block.type === 'codeExecutionResult' && result !== undefined) {
    // Gemini leaves `output` out when the code printed nothing.
    const output = typeof result.output === 'string' ? result.output : ''
    return typeof result.outcome === 'string'
      ? { kind: 'code_output', output, outcome: result.outcome }
      : { kind: 'code_output', output }
  }
  return { kind: 'result', type: block.type, content: 'content' in block ? block.content : block }
}

function field(block: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const value = block[key]
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}
