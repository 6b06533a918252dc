import type { ToolDefinition } from '@kode/protocol'
import { AgentError } from '../errors.js'
import type { FormatterInstructions, HistoryFormatter } from '../formatters/history-formatter.js'
import type { Tool } from '../tools/define-tool.js'
import type { SubAgentSpec } from '../tools/sub-agent-spec.js'
import { toolSet } from '../tools/tool-set.js'

/** Where a tool made by `defineSubAgent` keeps what its child gets: its name, tools and formatter. */
export const SUB_AGENT_SPEC = Symbol('kode.subAgentSpec')

/** What a sub-agent tool says of its child, for the checks made before any call. */
export type SubAgentTool = Tool & {
  readonly [SUB_AGENT_SPEC]: Pick<SubAgentSpec, 'name' | 'tools' | 'historyFormatter'>
}

/**
 * The child's instructions from its formatter. A formatter it inherited that refuses its tools (a
 * CodeAct parent's, for a child without the code tool) is named as the parent's, with the fix:
 * its own message speaks of "the agent", which would point at the parent, who has the tool.
 */
export function childInstructions(
  spec: Pick<SubAgentSpec, 'name' | 'historyFormatter'>,
  formatter: HistoryFormatter,
  tools: readonly ToolDefinition[],
): FormatterInstructions {
  try {
    return formatter.instructions(tools)
  } catch (error) {
    if (spec.historyFormatter !== undefined || !AgentError.is(error)) throw error
    throw new AgentError(
      'invalid_options',
      `the sub-agent ${spec.name} uses its parent's history formatter, which cannot work with its tools: ${error.message}. Give the sub-agent a historyFormatter of its own (nativeFormatter(), say).`,
      { cause: error },
    )
  }
}

/**
 * Checks, before any call, that every sub-agent among `tools` (made by `defineSubAgent`, theirs
 * too, at any depth) can work with the formatter it will use: its own, else the one it inherits.
 * Throws the `AgentError` its call would otherwise fail with.
 */
export function checkSubAgentFormatters(
  tools: readonly Tool[],
  formatter: HistoryFormatter,
  seen: Map<Tool, Set<HistoryFormatter>> = new Map(),
): void {
  for (const tool of tools) {
    const spec = (tool as Partial<SubAgentTool>)[SUB_AGENT_SPEC]
    if (spec === undefined) continue
    // Checked once per formatter it may inherit: a sub-agent among its own tools (an array filled
    // after it was defined) ends the walk, and one shared by two parents is checked under both.
    const checked = seen.get(tool) ?? new Set<HistoryFormatter>()
    if (checked.has(formatter)) continue
    seen.set(tool, checked.add(formatter))
    const own = spec.historyFormatter ?? formatter
    const children = spec.tools ?? []
    childInstructions(spec, own, toolSet(children).definitions ?? [])
    checkSubAgentFormatters(children, own, seen)
  }
}
