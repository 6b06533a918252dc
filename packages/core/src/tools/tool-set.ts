import type { ToolDefinition } from '@kode/protocol'
import { AgentError } from '../errors.js'
import type { Tool } from './define-tool.js'

/** An agent's tools, indexed once. */
export interface ToolSet {
  byName: ReadonlyMap<string, Tool>
  /** What the model is offered; `undefined` when there are no tools. */
  definitions: ToolDefinition[] | undefined
}

/** Indexes tools by name and builds what the model is offered. */
export function toolSet(tools: readonly Tool[]): ToolSet {
  const byName = new Map<string, Tool>()
  for (const tool of tools) byName.set(tool.name, tool)
  const definitions = tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
  }))
  return { byName, definitions: definitions.length > 0 ? definitions : undefined }
}

/**
 * Refuses a list that is not one of tools from `defineTool` (plain JavaScript or a cast lets a
 * bare object through, which would fail only when the model calls it), and two tools with one
 * name: the model could not tell them apart.
 */
export function checkToolNames(tools: readonly Tool[]): void {
  if (!Array.isArray(tools))
    throw new AgentError('invalid_options', 'tools must be an array of tools made with defineTool')
  const seen = new Set<string>()
  for (const [index, tool] of tools.entries()) {
    if (typeof (tool as Partial<Tool> | undefined)?.parseArguments !== 'function') {
      const name = typeof tool?.name === 'string' ? ` (${tool.name})` : ''
      throw new AgentError(
        'invalid_options',
        `tools[${index}]${name} was not made with defineTool; wrap it in defineTool({ ... })`,
      )
    }
    if (seen.has(tool.name)) throw new AgentError('invalid_options', `two tools are named ${tool.name}`)
    seen.add(tool.name)
  }
}
