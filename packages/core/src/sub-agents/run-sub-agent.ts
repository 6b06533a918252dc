import type { SubAgentState, UserContentPart } from '@kode/protocol'
import { outputSpec } from '../output/output-spec.js'
import { inheritedModelSettings, mergeModelSettings } from '../settings/model-settings.js'
import { Journal } from '../task/journal.js'
import { runTask } from '../task/run-task.js'
import { type TaskOutcome, type TaskRuntime, toolSet } from '../task/runtime.js'
import { TaskEvents } from '../task/task-events.js'
import { userParts } from '../task/user-input.js'
import { checkSubAgentSpec, type SubAgentSpec } from './sub-agent-spec.js'

/** The parent side of a sub-agent run: the task and the tool call that spawn it. */
export interface SubAgentParent {
  rt: TaskRuntime
  toolCallId: string
  /** The tool call's signal: the parent's interrupt (or the call's timeout) interrupts the child. */
  signal: AbortSignal
}

/**
 * Runs a child agent in a new session of the parent's store (linked by `parentSessionId` and
 * `subAgent`), with the parent's settings and event sink, so its events interleave on the
 * parent's stream with the child's `sessionId`. Its outcome carries its accounting, which the
 * parent's turn adds to its own `task_metadata`.
 * An unusable spec (or tools the child's formatter cannot work with) rejects with an `AgentError`,
 * which the calling tool reports as its error.
 */
export async function runSubAgent(
  parent: SubAgentParent,
  spec: SubAgentSpec,
  input: string | readonly UserContentPart[],
): Promise<TaskOutcome> {
  checkSubAgentSpec(spec)
  const { rt } = parent
  const settings = spec.maxTurns === undefined ? rt.settings : { ...rt.settings, maxTurns: spec.maxTurns }
  const sessionId = settings.createId()
  const client = spec.client ?? rt.client()
  const formatter = spec.historyFormatter ?? rt.formatter
  const tools = toolSet(spec.tools ?? [])
  const instructions = formatter.instructions(tools.definitions ?? [])
  const subAgentState: SubAgentState = {
    name: spec.name,
    parentSessionId: rt.sessionId,
    parentToolCallId: parent.toolCallId,
  }
  if (spec.label !== undefined) subAgentState.description = spec.label
  const child: TaskRuntime = {
    sessionId,
    signal: parent.signal,
    // A host failure that stops the parent stops the child as a failure too, not as an interrupt.
    hostFailure: rt.hostFailure,
    settings,
    store: rt.store,
    journal: new Journal(rt.store, sessionId, formatter, instructions),
    events: new TaskEvents(sessionId, settings.now, rt.sink),
    sink: rt.sink,
    tools,
    formatter,
    instructions,
    system: spec.system,
    subAgentState,
    sessionInit: {
      parentSessionId: rt.sessionId,
      subAgent: { name: spec.name, parentToolCallId: parent.toolCallId },
      model: client.model,
      provider: client.provider,
    },
    hooks: rt.hooks,
    failHost: rt.failHost,
    modelSettings: mergeModelSettings(inheritedModelSettings(rt.modelSettings), spec.modelSettings),
    output: spec.output ? outputSpec(spec.output) : undefined,
    client: () => client,
    takeSteering: () => [],
  }
  try {
    return await runTask(child, { kind: 'input', parts: userParts(input) })
  } catch (error) {
    child.events.abandon(error)
    throw error
  }
}
