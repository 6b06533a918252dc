import type { LLMClient } from '@kode/providers'
import type { TSchema } from '@sinclair/typebox'
import type { HistoryFormatter } from '../formatters/history-formatter.js'
import type { TaskOutcome } from '../outcome.js'
import { outputSpec } from '../output/output-spec.js'
import { positiveInteger } from '../settings/limits.js'
import { checkModelSettings, type ModelSettings } from '../settings/model-settings.js'
import type { Tool } from './define-tool.js'
import { checkToolNames } from './tool-set.js'

/** A child agent to run in its own session (see `ToolContext.runSubAgent` and `defineSubAgent`). */
export interface SubAgentSpec {
  /** The sub-agent's name, recorded on its session and on `task_start.subAgentState`. */
  name: string
  /** A short label of this particular task, shown as `task_start.subAgentState.description`. */
  label?: string | undefined
  /** The child's system prompt. */
  system?: string | undefined
  /** The child's tools (none by default). A child can run sub-agents of its own. */
  tools?: readonly Tool[] | undefined
  /** The child's model; default: the client the parent is using. */
  client?: LLMClient | undefined
  /** The child's turn limit; default: the parent agent's `maxTurns`. */
  maxTurns?: number | undefined
  /** How the child talks to its model; default: the parent's history formatter. */
  historyFormatter?: HistoryFormatter | undefined
  /**
   * The child's model settings, over the ones it inherits field by field. Default: the parent
   * task's settings without `toolChoice` (which names the parent's tools).
   */
  modelSettings?: ModelSettings | undefined
  /**
   * The child's structured final output (a TypeBox object schema), as `run(input, { output })`:
   * its answer, the tool result the parent's model reads, is JSON valid against it, and the
   * child's outcome carries the value as `output`.
   */
  output?: TSchema | undefined
}

/** How a sub-agent's task ended: its session, reason, final text and accounting. */
export type SubAgentOutcome = TaskOutcome

/**
 * Refuses a spec no child could run: a turn limit that is not a positive integer, or two tools
 * with one name. Throws `AgentError` (`invalid_options`).
 */
export function checkSubAgentSpec(
  spec: Pick<SubAgentSpec, 'tools' | 'maxTurns' | 'modelSettings' | 'output'>,
): void {
  if (spec.maxTurns !== undefined) positiveInteger('maxTurns', spec.maxTurns)
  if (spec.output !== undefined) outputSpec(spec.output)
  checkModelSettings(spec.modelSettings)
  checkToolNames(spec.tools ?? [])
}
