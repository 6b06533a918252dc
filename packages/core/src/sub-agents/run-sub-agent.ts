import type { SubAgentState, UserContentPart } from '@kode/protocol'
import { inheritedModelSettings, mergeModelSettings } from '../settings/model-settings.js'
import { Journal } from '../task/journal.js'
import { runTask, type TaskStart } from '../task/run-task.js'
import { type TaskOutcome, type TaskRuntime, toolSet } from '../task/runtime.js'
import { TaskEvents } from '../task/task-events.js'
import { userParts } from '../task/user-input.js'
import type { ApprovalDecision } from '../tools/approval.js'
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
  const child = childRuntime(parent, spec, parent.rt.settings.createId())
  return runChild(child, { kind: 'input', parts: userParts(input) })
}

/**
 * Carries on a sub-agent that paused for approval, in its own session, with the user's decisions
 * on its pending calls (the parent's `agent.continue` routes them here when its call runs again).
 * Decisions that do not fit the child's history reject with an `AgentError`.
 */
export async function continueSubAgent(
  parent: SubAgentParent,
  spec: SubAgentSpec,
  sessionId: string,
  approvals: readonly ApprovalDecision[],
): Promise<TaskOutcome> {
  checkSubAgentSpec(spec)
  return runChild(childRuntime(parent, spec, sessionId), { kind: 'continue', approvals })
}

async function runChild(child: TaskRuntime, start: TaskStart): Promise<TaskOutcome> {
  try {
    return await runTask(child, start)
  } catch (error) {
    child.events.abandon(error)
    throw error
  }
}

/** The child's runtime in `sessionId`: the parent's settings and sink, the spec's model and tools. */
function childRuntime(parent: SubAgentParent, spec: SubAgentSpec, sessionId: string): TaskRuntime {
  const { rt } = parent
  const settings = spec.maxTurns === undefined ? rt.settings : { ...rt.settings, maxTurns: spec.maxTurns }
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
  return {
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
    client: () => client,
    takeSteering: () => [],
  }
}
