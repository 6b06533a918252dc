import type { SubAgentState, UserContentPart } from '@kode/protocol'
import { outputSpec } from '../output/output-spec.js'
import { checkToolChoice, inheritedModelSettings, mergeModelSettings } from '../settings/model-settings.js'
import { pendingCalls } from '../task/approval.js'
import { SubAgentNotCarriedOn } from '../task/call-sub-agents.js'
import { runTask, type TaskStart } from '../task/run-task.js'
import {
  createTaskRuntime,
  type HostFailure,
  type RunScope,
  type SubAgentParent,
  type SubAgentResume,
  type SubAgentRun,
} from '../task/runtime.js'
import { userParts } from '../task/user-input.js'
import { checkSubAgentSpec, type SubAgentSpec } from '../tools/sub-agent-spec.js'
import { toolSet } from '../tools/tool-set.js'
import { ToolTimeoutError } from '../tools/tool-timeout.js'
import { childInstructions } from './inherited-formatter.js'

/**
 * Runs a child agent in a new session of the parent's store (linked by `parentSessionId` and
 * `subAgent`), with the parent's settings and event sink, so its events interleave on the
 * parent's stream with the child's `sessionId`. Its outcome carries its accounting, which the
 * parent's turn adds to its own `task_metadata`; when it paused, its pending calls come too.
 * An unusable spec (or tools the child's formatter cannot work with) rejects with an `AgentError`,
 * which the calling tool reports as its error.
 *
 * With `resume`, it carries on a sub-agent that paused for approval, in its own session, with the
 * user's decisions on its pending calls (the parent's `agent.continue` routes them here when the
 * parent's call runs again); decisions that do not fit the child's history reject with an
 * `AgentError`.
 */
export async function runSubAgent(
  parent: SubAgentParent,
  spec: SubAgentSpec,
  input: string | readonly UserContentPart[],
  resume?: SubAgentResume,
): Promise<SubAgentRun> {
  checkSubAgentSpec(spec)
  const { rt } = parent
  const settings = spec.maxTurns === undefined ? rt.settings : { ...rt.settings, maxTurns: spec.maxTurns }
  const sessionId = resume?.sessionId ?? settings.createId()
  const client = spec.client ?? rt.client()
  const formatter = spec.historyFormatter ?? rt.formatter
  const tools = toolSet(spec.tools ?? [])
  const instructions = childInstructions(spec, formatter, tools.definitions ?? [])
  // Its tool choice is its own (none is inherited): it must name one of its tools.
  const modelSettings = mergeModelSettings(inheritedModelSettings(rt.modelSettings), spec.modelSettings)
  checkToolChoice(
    modelSettings,
    (instructions.tools ?? []).map((tool) => tool.name),
    `the sub-agent ${spec.name}'s modelSettings`,
  )
  const subAgentState: SubAgentState = {
    name: spec.name,
    parentSessionId: rt.sessionId,
    parentToolCallId: parent.toolCallId,
  }
  if (spec.label !== undefined) subAgentState.description = spec.label
  // The child runs in the parent's scope: a host failure that stops the parent stops the child as
  // a failure too, not as an interrupt; so does the time limit of the call that runs it.
  const scope: RunScope = {
    store: rt.store,
    sink: rt.sink,
    hooks: rt.hooks,
    failHost: rt.failHost,
    runSubAgent: rt.runSubAgent,
    subAgentReads: rt.subAgentReads,
    hostFailure: () => rt.hostFailure() ?? timedOut(parent.signal) ?? notCarriedOn(parent.signal),
  }
  const child = createTaskRuntime(scope, {
    sessionId,
    newSession: resume === undefined,
    signal: parent.signal,
    settings,
    formatter,
    tools: () => tools,
    instructions: () => instructions,
    output: spec.output ? outputSpec(spec.output) : undefined,
    client: () => client,
    system: spec.system,
    modelSettings,
    subAgentState,
  })
  try {
    const start: TaskStart = resume
      ? { kind: 'continue', approvals: resume.approvals, settleOnly: resume.settleOnly }
      : { kind: 'input', parts: userParts(input) }
    const outcome = await runTask(child, start)
    const pending = outcome.reason === 'awaiting_approval' ? pendingCalls(child.journal.history) : []
    return { outcome, pending }
  } catch (error) {
    child.events.abandon(error)
    throw error
  }
}

/**
 * The failure of a child whose calling tool ran out of time (its signal aborted with the call's
 * `ToolTimeoutError`): an `error` with code `timeout`, since `aborted` means the user interrupted.
 */
function timedOut(signal: AbortSignal): HostFailure | undefined {
  const reason: unknown = signal.aborted ? signal.reason : undefined
  if (!(reason instanceof ToolTimeoutError)) return undefined
  return {
    message: `The sub-agent stopped at its time limit: ${lowerFirst(reason.message)}`,
    code: 'timeout',
  }
}

/** The failure of a paused child its parent's call ended without carrying on (see `CallSubAgents.link`). */
function notCarriedOn(signal: AbortSignal): HostFailure | undefined {
  const reason: unknown = signal.aborted ? signal.reason : undefined
  return reason instanceof SubAgentNotCarriedOn ? { message: reason.message } : undefined
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1)
}
