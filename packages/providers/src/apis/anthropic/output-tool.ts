import type { ResponseFormat } from '../../types.js'

/**
 * The tool that carries a structured answer on the Messages API, which has no response format of
 * its own: its `input_schema` is the answer's schema and its input is the answer. The event
 * mapper turns its input into text, so it never reaches the host as a tool call.
 */
export const STRUCTURED_OUTPUT_TOOL = 'structured_output'

/** The tool's declaration: what tells the model to give its final answer through it. */
export function outputToolDeclaration(format: ResponseFormat): Record<string, unknown> {
  const what = format.description ? ` (${format.description})` : ''
  return {
    name: STRUCTURED_OUTPUT_TOOL,
    description:
      `Give your final answer${what} by calling this tool: its input is the answer. ` +
      'Call the other tools you need first; call this one once, alone, when you are done.',
    input_schema: format.schema,
  }
}

/**
 * `tool_choice` when the host set none: without other tools the answer tool is forced; with
 * other tools the model must call one of them (`any`), the answer tool being one. Extended
 * thinking allows only `auto`, so then the model is asked by the tool's description alone (an
 * answer in plain text still goes through the engine's validation).
 */
export function outputToolChoice(otherTools: boolean, thinking: boolean): Record<string, unknown> {
  if (thinking) return { type: 'auto' }
  return otherTools ? { type: 'any' } : { type: 'tool', name: STRUCTURED_OUTPUT_TOOL }
}
